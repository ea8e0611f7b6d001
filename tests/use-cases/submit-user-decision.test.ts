/**
 * A person's decision at a checkpoint (submit_user_decision): modify, reject,
 * skip, approve, and two decisions racing.
 * In process, on PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("submit_user_decision on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  async function planAtReview(stepTypes = ["checkpoint", "synthesize"]) {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Review",
      researchQuestion: "q",
      steps: planSteps(...stepTypes),
    });
    const planId: string = created.planId;
    const next = await tenant.agent.ok("get_next_step", { planId });
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: next.step.stepId,
      summary: "Please check.",
    });
    return {
      planId,
      stepId: next.step.stepId as string,
      reviewRequestId: review.reviewRequestId as string,
      created,
    };
  }

  it("review decisions: modify appends feedback and returns the step to the agent", async () => {
    const { planId, stepId, reviewRequestId } = await planAtReview();
    expect(
      await tenant.agent.fails("submit_user_decision", {
        planId,
        reviewRequestId,
        decision: "modify",
      }),
    ).toMatch(/^VALIDATION_ERROR: .*feedback/);
    const modified = await tenant.agent.ok("submit_user_decision", {
      planId,
      reviewRequestId,
      decision: "modify",
      feedback: "Include 2024 prices.",
    });
    expect(modified).toMatchObject({ stepStatus: "in_progress", planStatus: "executing" });
    expect(modified.instructions).toMatch(/\n\n---\n\nUser feedback: Include 2024 prices\.$/);
    const context = await tenant.agent.ok("get_research_context", { planId, sessionId: "s2" });
    const step = context.steps.find((s: { stepId: string }) => s.stepId === stepId);
    expect(step?.status).toBe("in_progress");
    expect(step?.instructions).toContain("User feedback: Include 2024 prices.");
    expect(context.reviews[0].decision).toMatchObject({
      decision: "modify",
      feedback: "Include 2024 prices.",
    });
    // The agent asks again; this time the person approves.
    const again = await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "Redone.",
    });
    await tenant.agent.ok("submit_user_decision", {
      planId,
      decision: "approve",
      reviewRequestId: again.reviewRequestId,
    });
    expect((await tenant.agent.ok("get_next_step", { planId })).step.stepOrder).toBe(2);
  });
  it("review decisions: reject fails the step and the plan; skip skips the step", async () => {
    const rejected = await planAtReview();
    const answer = await tenant.agent.ok("submit_user_decision", {
      planId: rejected.planId,
      reviewRequestId: rejected.reviewRequestId,
      decision: "reject",
      feedback: "Wrong question.",
    });
    expect(answer).toMatchObject({ stepStatus: "failed", planStatus: "failed" });

    const skipped = await planAtReview(["checkpoint"]);
    const skip = await tenant.agent.ok("submit_user_decision", {
      planId: skipped.planId,
      reviewRequestId: skipped.reviewRequestId,
      decision: "skip",
    });
    expect(skip).toMatchObject({ stepStatus: "skipped", planStatus: "completed" });
  });
  it("review decisions: of two racing decisions one wins and the other gets CONFLICT", async () => {
    const { planId, reviewRequestId } = await planAtReview();
    // A second caller with the same key, as another session would be.
    const other = inProcessAgent(tenant.agent.ctx);
    const answers = await Promise.all([
      tenant.agent.call("submit_user_decision", { planId, decision: "approve", reviewRequestId }),
      other.call("submit_user_decision", { planId, decision: "reject", reviewRequestId }),
    ]);
    expect(answers.filter((a) => !a.isError)).toHaveLength(1);
    const loser = answers.find((a) => a.isError);
    expect(loser?.text).toMatch(/^CONFLICT: The plan is no longer waiting for a decision/);
    const context = await tenant.agent.ok("get_research_context", { planId });
    expect(context.reviews).toHaveLength(1);
    expect(context.reviews[0].status).toBe("decided");
  });
});
