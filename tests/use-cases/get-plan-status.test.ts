/**
 * Stall detection by get_plan_status, and get_next_step resuming a stalled
 * plan: the stuck step is handed out again, and the first result wins. Stalls
 * follow leases: an agent renewing through get_step_context is never flagged;
 * the scheduler marks a silent one as Cairn, once, and its agent may still
 * modify it. In process, on PGlite and on PostgreSQL 15.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { planAuditLog } from "../../lib/db/schema";
import { markStalledPlans } from "../../lib/services/plans/mark-stalled-plans";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, useFreshTenant } from "../support/in-process";
import { report } from "../support/mcp-client";

const STALL_SECONDS = 4;

describe.each(BACKENDS)("get_plan_status and stalls on %s", (backend) => {
  const tenant = useFreshTenant(backend, { stallThresholdSeconds: STALL_SECONDS });

  it("detects a stall after the threshold and resumes the plan from get_next_step", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Stall",
      researchQuestion: "q",
      steps: planSteps("search", "analyze", "synthesize"),
    });
    const planId = created.planId;
    const first = await tenant.agent.ok("get_next_step", { planId });
    const fresh = await tenant.agent.ok("get_plan_status", { planId });
    expect(fresh).toMatchObject({ status: "executing", stallWarnings: [] });

    await new Promise((resolve) => setTimeout(resolve, (STALL_SECONDS + 1) * 1000));
    const stalled = await tenant.agent.ok("get_plan_status", { planId });
    expect(stalled.status).toBe("stalled");
    expect(stalled.stallThresholdSeconds).toBe(STALL_SECONDS);
    expect(stalled.stallWarnings).toEqual([
      expect.objectContaining({ stepId: first.step.stepId, stepOrder: 1 }),
    ]);
    expect(stalled.stallWarnings[0].inProgressSeconds).toBeGreaterThan(STALL_SECONDS);
    expect(stalled.progress).toMatchObject({ total: 3, inProgress: 1, pending: 2, percent: 0 });

    // A new session resumes: the stuck step's lease (the stall threshold by
    // default) has run out, so it is handed out again before the pending ones.
    // A second caller with the same key, as another session would be.
    const second = inProcessAgent(tenant.agent.ctx);
    const context = await second.ok("get_research_context", { planId, sessionId: "session-2" });
    expect(context.plan.status).toBe("stalled");
    const resumed = await second.ok("get_next_step", { planId });
    expect(resumed).toMatchObject({ status: "ready", planStatus: "executing" });
    expect(resumed.step).toMatchObject({ stepId: first.step.stepId, attempt: 2 });
    // The first holder comes back and answers first: its result is kept.
    await tenant.agent.submit(planId, first.step.stepId);
    const late = await second.call("submit_step_result", {
      planId,
      stepId: resumed.step.stepId,
      result: { ok: "late" },
      stepExecutionReport: report,
    });
    expect(late.text).toMatch(/^CONFLICT: /);
    const two = await second.ok("get_next_step", { planId });
    expect(two.step.stepOrder).toBe(2);
    await tenant.agent.submit(planId, two.step.stepId);
    const last = await second.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, last.step.stepId);
    expect((await second.ok("get_next_step", { planId })).status).toBe("plan_complete");
  });

  it("never flags an agent renewing its lease; the scheduler marks a silent one as Cairn, once", async () => {
    const sleep = (seconds: number) =>
      new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Leases",
      researchQuestion: "q",
      steps: planSteps("search", "analyze"),
    });
    const first = await tenant.agent.ok("get_next_step", { planId });
    // Working longer than the threshold, renewing the lease as it goes.
    for (let i = 0; i < 4; i += 1) {
      await sleep(STALL_SECONDS / 2);
      await tenant.agent.ok("get_step_context", { planId, stepId: first.step.stepId });
    }
    const settings = { stallThresholdSeconds: STALL_SECONDS };
    expect(await markStalledPlans(tenant.handle.db, settings, { planId })).toBe(0);
    expect(await tenant.agent.ok("get_plan_status", { planId })).toMatchObject({
      status: "executing",
      stallWarnings: [],
    });

    // The agent goes silent: its lease runs out, and two scheduler ticks at once mark the plan once.
    await sleep(STALL_SECONDS + 1);
    const ticks = await Promise.all([
      markStalledPlans(tenant.handle.db, settings, { planId }),
      markStalledPlans(tenant.handle.db, settings, { planId }),
    ]);
    expect(ticks[0] + ticks[1]).toBe(1);
    const stalled = await tenant.agent.ok("get_plan_status", { planId });
    expect(stalled.status).toBe("stalled");
    expect(stalled.stallWarnings[0]?.idleSeconds).toBeGreaterThanOrEqual(STALL_SECONDS);
    const marks = await tenant.handle.db
      .select({ actorType: planAuditLog.actorType, actorLabel: planAuditLog.actorLabel })
      .from(planAuditLog)
      .where(and(eq(planAuditLog.planId, planId), eq(planAuditLog.eventType, "plan_modified")));
    expect(marks.filter((m) => m.actorLabel === "Cairn")).toEqual([
      { actorType: "system", actorLabel: "Cairn" },
    ]);

    // Its own agent may still change the plan, which resumes it.
    const changed = await tenant.agent.ok("modify_plan", {
      planId,
      action: "update_step_instructions",
      stepId: (await tenant.agent.ok("get_plan_status", { planId })).steps[1]?.stepId,
      instructions: "Analyze what step 1 found.",
      modificationRationale: "Sharper instructions.",
    });
    expect(changed.planStatus).toBe("executing");
  });
});
