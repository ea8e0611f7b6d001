/**
 * Stall detection by get_plan_status, and get_next_step resuming a stalled
 * plan: the stuck step is handed out again, and the first result wins.
 * In process, on PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
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
});
