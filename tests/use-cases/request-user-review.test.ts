/**
 * request_user_review (docs/reviews.md): only the step in progress of an
 * executing plan can be put up for review; a deadline needs its onTimeout and
 * is one of deadlineSeconds or deadlineAt; assignTo names a team member or a
 * role. In process, on PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("request_user_review on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  /** A plan whose first step is in progress, and its second step (pending). */
  async function stepInProgress() {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Review",
      researchQuestion: "q",
      steps: planSteps("checkpoint", "synthesize"),
    });
    const next = await tenant.agent.ok("get_next_step", { planId: created.planId });
    return {
      planId: created.planId as string,
      stepId: next.step.stepId as string,
      pendingStepId: created.steps[1].stepId as string,
    };
  }

  it("puts the step in progress up for review and pauses the plan", async () => {
    const { planId, stepId } = await stepInProgress();
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "Please check.",
      questions: ["Enough sources?"],
    });
    expect(review).toMatchObject({
      planId,
      stepId,
      stepStatus: "awaiting_input",
      planStatus: "awaiting_review",
      assignedUserId: null,
      assignedRole: null,
    });
    expect(review).not.toHaveProperty("dueAt");
  });

  it("refuses a step that is not in progress", async () => {
    const { planId, pendingStepId } = await stepInProgress();
    const refused = await tenant.agent.fails("request_user_review", {
      planId,
      stepId: pendingStepId,
      summary: "Please check.",
    });
    expect(refused).toMatch(/^INVALID_TRANSITION: Step 2 is pending; only the step in progress/);
  });

  it("refuses a plan that is not executing: one still planning, one already under review", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Not started",
      researchQuestion: "q",
      steps: planSteps("search"),
    });
    const planning = await tenant.agent.fails("request_user_review", {
      planId: created.planId,
      stepId: created.steps[0].stepId,
      summary: "Please check.",
    });
    expect(planning).toMatch(/^INVALID_TRANSITION: .* is planning; .*Call get_next_step/);

    const { planId, stepId } = await stepInProgress();
    await tenant.agent.ok("request_user_review", { planId, stepId, summary: "First." });
    const twice = await tenant.agent.fails("request_user_review", {
      planId,
      stepId,
      summary: "Second.",
    });
    expect(twice).toMatch(/^INVALID_TRANSITION: .* is awaiting_review; .*already pending/);
  });

  it("validates the deadline: one of seconds or a time, in the future, with onTimeout", async () => {
    const { planId, stepId } = await stepInProgress();
    const base = { planId, stepId, summary: "Please check." };
    expect(
      await tenant.agent.fails("request_user_review", {
        ...base,
        deadlineSeconds: 60,
        deadlineAt: new Date(Date.now() + 60_000).toISOString(),
        onTimeout: "approve",
      }),
    ).toMatch(/^VALIDATION_ERROR: Give deadlineSeconds or deadlineAt, not both/);
    expect(await tenant.agent.fails("request_user_review", { ...base, onTimeout: "skip" })).toMatch(
      /^VALIDATION_ERROR: onTimeout needs a deadline/,
    );
    expect(
      await tenant.agent.fails("request_user_review", { ...base, deadlineSeconds: 60 }),
    ).toMatch(/^VALIDATION_ERROR: A deadline needs onTimeout/);
    expect(
      await tenant.agent.fails("request_user_review", {
        ...base,
        deadlineAt: new Date(Date.now() - 60_000).toISOString(),
        onTimeout: "reject",
      }),
    ).toMatch(/^VALIDATION_ERROR: deadlineAt is in the past/);
    // None of the refusals changed the step: a valid deadline is accepted after them.
    const review = await tenant.agent.ok("request_user_review", {
      ...base,
      deadlineSeconds: 3600,
      onTimeout: "escalate",
    });
    expect(review.onTimeout).toBe("escalate");
    expect(Date.parse(review.dueAt ?? "")).toBeGreaterThan(Date.now() + 3500_000);
  });

  it("assigns to a team member or a role; an unknown e-mail is a VALIDATION_ERROR", async () => {
    const first = await stepInProgress();
    const unknown = await tenant.agent.fails("request_user_review", {
      planId: first.planId,
      stepId: first.stepId,
      summary: "Please check.",
      assignTo: "nobody@example.com",
    });
    expect(unknown).toMatch(/^VALIDATION_ERROR: assignTo: nobody in this team signs in as/);
    // The tenant's admin, by e-mail in any case.
    const toAdmin = await tenant.agent.ok("request_user_review", {
      planId: first.planId,
      stepId: first.stepId,
      summary: "Please check.",
      assignTo: "ALPHA@example.com",
    });
    expect(toAdmin.assignedUserId).toEqual(expect.any(String));
    expect(toAdmin.assignedRole).toBeNull();

    const second = await stepInProgress();
    const toRole = await tenant.agent.ok("request_user_review", {
      planId: second.planId,
      stepId: second.stepId,
      summary: "Please check.",
      assignTo: { role: "admin" },
    });
    expect(toRole).toMatchObject({ assignedUserId: null, assignedRole: "admin" });
  });
});
