/**
 * get_next_step (docs/execution-loop.md): steps are handed out in order, one
 * caller each; a hand-out's lease runs out and the step is handed out again;
 * a plan waiting on a review or on added steps says so; another tenant's plan
 * does not exist. In process, on PGlite and on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, tenantContext, useFreshTenant } from "../support/in-process";
import { readRows } from "../support/rows";

const LEASE_SECONDS = 1;

describe.each(BACKENDS)("get_next_step on %s", (backend) => {
  // Leases of the stall threshold (30 minutes): no hand-out runs out during a
  // test but the one that uses a short lease on purpose.
  const tenant = useFreshTenant(backend);

  async function newPlan(...types: string[]) {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Next",
      researchQuestion: "q",
      steps: planSteps(...types),
    });
    return created;
  }

  it("hands out the pending steps in order, a different one to each caller", async () => {
    const created = await newPlan("search", "analyze", "synthesize");
    const planId = created.planId;
    const first = await tenant.agent.ok("get_next_step", { planId });
    expect(first).toMatchObject({ status: "ready", planStatus: "executing", totalSteps: 3 });
    expect(first.step).toMatchObject({
      stepId: created.steps[0].stepId,
      stepOrder: 1,
      stepType: "search",
      instructions: "Step 1: do the search work.",
      attempt: 1,
    });
    // A second pull while the first step is held gets the next one, not the same.
    const second = await tenant.agent.ok("get_next_step", { planId });
    expect(second.step).toMatchObject({ stepId: created.steps[1].stepId, stepOrder: 2 });
    const third = await tenant.agent.ok("get_next_step", { planId });
    expect(third.step.stepOrder).toBe(3);
    // Every step held: nothing to hand out, and the answer names the first lease to run out.
    expect(await tenant.agent.ok("get_next_step", { planId })).toMatchObject({
      status: "no_pending_steps",
      inProgressCount: 3,
      failedCount: 0,
      nextLeaseExpiresAt: first.step.leaseExpiresAt,
    });
    await tenant.agent.submit(planId, first.step.stepId);
    await tenant.agent.submit(planId, second.step.stepId);
    await tenant.agent.submit(planId, third.step.stepId);
    const done = await tenant.agent.ok("get_next_step", { planId });
    expect(done).toMatchObject({ status: "plan_complete", planId });
    // The answer names the calls that come next, by name.
    expect(done.hint).toMatch(/store_research_output .* submit_research_feedback/);
    expect(created.hint).toMatch(/Call get_next_step with this planId to be handed step 1/);
  });

  it("answers a completed plan with its steps' formatting notes, in step order", async () => {
    const created = await newPlan("search", "analyze", "synthesize");
    const planId = created.planId;
    const one = (await tenant.agent.ok("get_next_step", { planId })).step;
    const two = (await tenant.agent.ok("get_next_step", { planId })).step;
    const three = (await tenant.agent.ok("get_next_step", { planId })).step;
    // Submitted out of order, one without notes.
    await tenant.agent.submit(planId, three.stepId, { outputFormattingNotes: "Table last." });
    await tenant.agent.submit(planId, two.stepId);
    await tenant.agent.submit(planId, one.stepId, { outputFormattingNotes: "Cite first." });
    // The plan row's locker: the answer reads a finished plan without locking
    // it, since a lock is a write whose commit waits for the WAL's flush.
    const locker = () =>
      readRows<{ xmax: string }>(
        tenant.handle.db,
        sql`select xmax::text as xmax from research_plan where id = ${planId}::uuid`,
      );
    const lockerBefore = await locker();
    const done = await tenant.agent.ok("get_next_step", { planId });
    expect(await locker()).toEqual(lockerBefore);
    expect(done).toMatchObject({
      status: "plan_complete",
      // No skill execution is linked: no format asked for.
      outputMediaType: null,
      outputFormattingInstructions: null,
      stepFormattingNotes: [
        { stepId: one.stepId, stepOrder: 1, notes: "Cite first." },
        { stepId: three.stepId, stepOrder: 3, notes: "Table last." },
      ],
    });
    expect(done.hint).toMatch(/^Every step is done\. Call get_research_context/);
  });

  it("hands a step out again once its lease runs out, counting the attempts", async () => {
    const shortLease = inProcessAgent({ ...tenant.agent.ctx, stepLeaseSeconds: LEASE_SECONDS });
    const created = await newPlan("search");
    const planId = created.planId;
    const first = await shortLease.ok("get_next_step", { planId });
    await new Promise((resolve) => setTimeout(resolve, (LEASE_SECONDS + 0.5) * 1000));
    const again = await shortLease.ok("get_next_step", { planId });
    expect(again).toMatchObject({ status: "ready" });
    expect(again.step).toMatchObject({ stepId: first.step.stepId, attempt: 2 });
    expect(Date.parse(again.step.leaseExpiresAt)).toBeGreaterThan(
      Date.parse(first.step.leaseExpiresAt),
    );
  });

  it("answers awaiting_review with the pending review while a person decides", async () => {
    const created = await newPlan("checkpoint", "synthesize");
    const planId = created.planId;
    const next = await tenant.agent.ok("get_next_step", { planId });
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: next.step.stepId,
      summary: "Please check the sources.",
    });
    const answer = await tenant.agent.ok("get_next_step", { planId });
    expect(answer).toMatchObject({
      status: "awaiting_review",
      planId,
      review: {
        reviewRequestId: review.reviewRequestId,
        stepId: next.step.stepId,
        summary: "Please check the sources.",
      },
    });
    expect(answer.review).not.toHaveProperty("dueAt");
    expect(answer.step).toBeUndefined();
  });

  it("answers awaiting_steps with the add_steps condition the plan waits on", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Grow",
      researchQuestion: "q",
      steps: planSteps("search"),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.gaps > 0",
          ifTrueAction: "add_steps",
          actionParams: { focus: "fill the gaps" },
        },
      ],
    });
    const planId = created.planId;
    const first = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, first.step.stepId, { result: { gaps: 1 } });
    const answer = await tenant.agent.ok("get_next_step", { planId });
    expect(answer).toMatchObject({
      status: "awaiting_steps",
      planId,
      condition: {
        conditionId: created.branchingConditions[0].conditionId,
        conditionExpression: "result.gaps > 0",
        stepId: first.step.stepId,
        stepOrder: 1,
        params: { focus: "fill the gaps" },
      },
    });
    expect(answer.hint).toMatch(/modify_plan/);
  });

  it("does not find another tenant's plan, and hands nothing out of it", async () => {
    const created = await newPlan("search");
    const beta = inProcessAgent(await tenantContext(tenant.handle.db, "Beta"));
    expect(await beta.fails("get_next_step", { planId: created.planId })).toMatch(/^NOT_FOUND: /);
    const status = await tenant.agent.ok("get_plan_status", { planId: created.planId });
    expect(status).toMatchObject({ status: "planning", progress: { pending: 1 } });
  });
});
