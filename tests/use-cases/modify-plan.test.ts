/**
 * modify_plan's actions: add, remove, reorder, update, fail and retry steps, and
 * a plan that cannot be modified while it waits for a review; a fail_step that
 * ends the plan says so, and a retry of that step re-opens it.
 * In process, on PGlite and on PostgreSQL 15.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { planAuditLog } from "../../lib/db/schema";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("modify_plan on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("modify_plan: add, remove, reorder, update, fail and retry steps", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Modify",
      researchQuestion: "q",
      steps: planSteps("search", "analyze", "synthesize"),
    });
    const planId = created.planId;
    const ids = created.steps.map((s: { stepId: string }) => s.stepId);
    const why = { modificationRationale: "Because the test says so." };

    const added = await tenant.agent.ok("modify_plan", {
      planId,
      action: "add_steps",
      insertAfterOrder: 1,
      steps: [{ stepType: "extract", instructions: "Extract the numbers." }],
      ...why,
    });
    expect(added.steps.map((s: { stepType: string }) => s.stepType)).toEqual([
      "search",
      "extract",
      "analyze",
      "synthesize",
    ]);
    expect(added.planStatus).toBe("planning");
    const appended = await tenant.agent.ok("modify_plan", {
      planId,
      action: "add_steps",
      steps: [{ stepType: "critique", instructions: "Critique." }],
      ...why,
    });
    expect(appended.steps.at(-1)).toMatchObject({ stepOrder: 5, stepType: "critique" });

    const removed = await tenant.agent.ok("modify_plan", {
      planId,
      action: "remove_step",
      stepId: ids[1],
      ...why,
    });
    expect(removed.steps.map((s: { stepOrder: number }) => s.stepOrder)).toEqual([1, 2, 3, 4]);
    expect(removed.steps.some((s: { stepId: string }) => s.stepId === ids[1])).toBe(false);

    const order = [...removed.steps.map((s: { stepId: string }) => s.stepId)].reverse();
    const reordered = await tenant.agent.ok("modify_plan", {
      planId,
      action: "reorder_steps",
      stepIds: order,
      ...why,
    });
    expect(reordered.steps.map((s: { stepId: string }) => s.stepId)).toEqual(order);
    // The new order is stored (the ids travel to the database as one bound parameter).
    const stored = await tenant.agent.ok("get_plan_status", { planId });
    expect(
      stored.steps.map((s: { stepId: string; stepOrder: number }) => [s.stepOrder, s.stepId]),
    ).toEqual(order.map((id: string, index: number) => [index + 1, id]));
    expect(
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "reorder_steps",
        stepIds: order.slice(1),
        ...why,
      }),
    ).toMatch(/^VALIDATION_ERROR: stepIds must list every step/);

    await tenant.agent.ok("modify_plan", {
      planId,
      action: "update_step_instructions",
      stepId: order[0],
      instructions: "New instructions.",
      ...why,
    });
    const next = await tenant.agent.ok("get_next_step", { planId });
    expect(next.step).toMatchObject({ stepId: order[0], instructions: "New instructions." });

    const failed = await tenant.agent.ok("modify_plan", {
      planId,
      action: "fail_step",
      stepId: next.step.stepId,
      reason: "Source down.",
      ...why,
    });
    expect(failed.steps[0].status).toBe("failed");
    expect(failed.planStatus).toBe("executing");
    expect(
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "remove_step",
        stepId: next.step.stepId,
        ...why,
      }),
    ).toMatch(/^INVALID_TRANSITION: .*only a pending step can be removed/);
    const retried = await tenant.agent.ok("modify_plan", {
      planId,
      action: "retry_step",
      stepId: next.step.stepId,
      ...why,
    });
    expect(retried.steps[0].status).toBe("pending");
    expect((await tenant.agent.ok("get_next_step", { planId })).step.stepId).toBe(next.step.stepId);
    expect(
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "retry_step",
        stepId: next.step.stepId,
        ...why,
      }),
    ).toMatch(/^INVALID_TRANSITION: .*only a failed step can be retried/);

    const paused = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: next.step.stepId,
      summary: "s",
    });
    expect(paused.planStatus).toBe("awaiting_review");
    expect(
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "add_steps",
        steps: planSteps("custom"),
        ...why,
      }),
    ).toMatch(/^PLAN_NOT_MODIFIABLE: .*awaiting_review/);
  });

  it("says a fail_step ended the plan, and re-opens the plan by retrying that step, audited", async () => {
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Re-open",
      researchQuestion: "q",
      steps: planSteps("search", "synthesize"),
    });
    const one = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, one.step.stepId);
    const two = await tenant.agent.ok("get_next_step", { planId });
    const failed = await tenant.agent.ok("modify_plan", {
      planId,
      action: "fail_step",
      stepId: two.step.stepId,
      reason: "Stuck",
      modificationRationale: "The step is stuck.",
    });
    expect(failed.planStatus).toBe("completed");
    expect(failed.planEnded).toMatch(/completed with step 2 failed.*retry_step/);
    expect((await tenant.agent.ok("get_next_step", { planId })).hint).toMatch(
      /Step 2 failed; modify_plan retry_step on it re-opens the plan/,
    );

    const reopened = await tenant.agent.ok("modify_plan", {
      planId,
      action: "retry_step",
      stepId: two.step.stepId,
      modificationRationale: "The synthesis still has to be written.",
    });
    expect(reopened.planStatus).toBe("executing");
    expect((await tenant.agent.ok("list_active_plans", { limit: 100 })).plans).toContainEqual(
      expect.objectContaining({ planId }),
    );
    const again = await tenant.agent.ok("get_next_step", { planId });
    expect(again.step.stepId).toBe(two.step.stepId);
    await tenant.agent.submit(planId, again.step.stepId);
    expect((await tenant.agent.ok("get_next_step", { planId })).status).toBe("plan_complete");

    const trail = await tenant.handle.db
      .select({ actorLabel: planAuditLog.actorLabel, payload: planAuditLog.payload })
      .from(planAuditLog)
      .where(and(eq(planAuditLog.planId, planId), eq(planAuditLog.eventType, "plan_modified")));
    expect(trail).toContainEqual({
      actorLabel: tenant.agent.ctx.actor.label,
      payload: expect.objectContaining({
        action: "retry_step",
        reopened: true,
        previousPlanStatus: "completed",
        modificationRationale: "The synthesis still has to be written.",
      }),
    });
  });
});
