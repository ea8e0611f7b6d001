/**
 * cancel_plan: an agent ends an unfinished plan with a reason. Its pending
 * review is withdrawn and the leases of its steps end; every later call says
 * the plan was cancelled (by whom and why), and the active lists leave it out.
 * In process, on PGlite and on PostgreSQL 15.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { planAuditLog } from "../../lib/db/schema";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";
import { plainResult } from "../support/mcp-client";

describe.each(BACKENDS)("cancel_plan on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("withdraws a pending review, and every later call says the plan was cancelled", async () => {
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "To cancel",
      researchQuestion: "q",
      steps: planSteps("search", "analyze"),
    });
    const first = await tenant.agent.ok("get_next_step", { planId });
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: first.step.stepId,
      summary: "Is this the right scope?",
    });
    const cancelled = await tenant.agent.ok("cancel_plan", {
      planId,
      reason: "The user no longer needs this research",
    });
    expect(cancelled).toMatchObject({
      planStatus: "cancelled",
      reason: "The user no longer needs this research",
      withdrawnReviewIds: [review.reviewRequestId],
      cancelledBy: tenant.agent.ctx.actor.label,
    });

    const next = await tenant.agent.ok("get_next_step", { planId });
    expect(next).toMatchObject({
      status: "plan_cancelled",
      cancellation: { reason: "The user no longer needs this research" },
    });
    expect(next.hint).toMatch(/was cancelled by .*: The user no longer needs this research/);
    expect(await tenant.agent.ok("get_plan_status", { planId })).toMatchObject({
      status: "cancelled",
      cancellation: { by: tenant.agent.ctx.actor.label },
    });
    expect(
      await tenant.agent.fails("submit_user_decision", {
        planId,
        reviewRequestId: review.reviewRequestId,
        decision: "approve",
      }),
    ).not.toMatch(/^INTERNAL_ERROR/);
    expect(
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "retry_step",
        stepId: first.step.stepId,
        modificationRationale: "again",
      }),
    ).toMatch(/^PLAN_NOT_MODIFIABLE: .*is cancelled/);
    expect(await tenant.agent.fails("cancel_plan", { planId, reason: "twice" })).toMatch(
      /^PLAN_NOT_MODIFIABLE: .*is cancelled; only an unfinished plan can be cancelled/,
    );
    const active = await tenant.agent.ok("list_active_plans", { limit: 100 });
    expect(active.plans.map((p) => p.planId)).not.toContain(planId);

    const trail = await tenant.handle.db
      .select({ eventType: planAuditLog.eventType, payload: planAuditLog.payload })
      .from(planAuditLog)
      .where(eq(planAuditLog.planId, planId))
      .orderBy(planAuditLog.seq);
    expect(trail.slice(-2)).toMatchObject([
      { eventType: "user_reviewed", payload: { action: "review_withdrawn" } },
      {
        eventType: "plan_modified",
        payload: { action: "cancelled", reason: "The user no longer needs this research" },
      },
    ]);
  });

  it("ends the lease of a step in progress: its holder's result is refused as cancelled", async () => {
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Abandoned",
      researchQuestion: "q",
      steps: planSteps("search", "analyze"),
    });
    const first = await tenant.agent.ok("get_next_step", { planId });
    const cancelled = await tenant.agent.ok("cancel_plan", { planId, reason: "Abandoned" });
    expect(cancelled.releasedStepIds).toEqual([first.step.stepId]);
    const context = await tenant.agent.ok("get_step_context", {
      planId,
      stepId: first.step.stepId,
    });
    expect(context.leaseExpiresAt).toBeNull();
    expect(
      (await tenant.agent.call("submit_step_result", plainResult(planId, first.step.stepId))).text,
    ).toMatch(/^INVALID_TRANSITION: Plan .* is cancelled/);
  });
});
