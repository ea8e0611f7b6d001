/**
 * submit_step_result on a step nobody has pulled yet (the timing edge case),
 * a submit that must not complete a plan paused on a failed server step, and
 * the plan's activity time a submit keeps or moves. In process, on PGlite and on
 * PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, useFreshTenant } from "../support/in-process";
import { plainResult } from "../support/mcp-client";
import { readRows } from "../support/rows";

describe.each(BACKENDS)("submit_step_result on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("accepts a result for a step still pending (the timing edge case)", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Edge",
      researchQuestion: "q",
      steps: planSteps("search", "analyze"),
    });
    const submitted = await tenant.agent.submit(created.planId, created.steps[0].stepId);
    expect(submitted).toMatchObject({ stepStatus: "completed", planStatus: "executing" });
    expect(
      (await tenant.agent.ok("get_next_step", { planId: created.planId })).step.stepOrder,
    ).toBe(2);
  });

  it("keeps the plan's activity time within a second of a submit that leaves its status, on both submit paths", async () => {
    // An output schema takes the submit's full path (complete-step.ts); without one,
    // the one-statement submit (complete-step-guarded.ts).
    const [search, analyze, synthesize] = planSteps("search", "analyze", "synthesize");
    const checked = { type: "object" };
    const { planId: first, steps: firstSteps } = await tenant.agent.ok("create_research_plan", {
      name: "Activity",
      researchQuestion: "q",
      steps: [search, { ...analyze, outputSchema: checked }, synthesize],
    });
    const { planId: second, steps: secondSteps } = await tenant.agent.ok("create_research_plan", {
      name: "Activity, again",
      researchQuestion: "q",
      steps: [search, { ...synthesize, outputSchema: checked }],
    });
    const { db } = tenant.handle;
    /** As milliseconds since the epoch. */
    const activityOf = async (planId: string, set?: number) =>
      (
        await readRows<{ at: number }>(
          db,
          set === undefined
            ? sql`select (extract(epoch from updated_at) * 1000)::float8 as at
                from research_plan where id = ${planId}::uuid`
            : sql`update research_plan set updated_at = now() + make_interval(secs => ${set / 1000})
                where id = ${planId}::uuid
                returning (extract(epoch from updated_at) * 1000)::float8 as at`,
        )
      )[0]?.at;
    /** Pulls and submits the step with the plan's activity time set `offset` ms from now; the times before and after. */
    const submitAt = async (planId: string, stepId: string, offset: number) => {
      await tenant.agent.ok("get_next_step", { planId });
      const set = await activityOf(planId, offset);
      const before = Date.now();
      await tenant.agent.submit(planId, stepId);
      return { set, before, after: await activityOf(planId) };
    };
    const [a, b, c] = firstSteps;
    const [d, e] = secondSteps;
    if (!a || !b || !c || !d || !e) throw new Error("The plans' steps are missing.");

    // Within the second before, and after (a submit that waited behind another
    // call's lock): kept, so the row's update can be HOT.
    const kept = [await submitAt(first, a.stepId, -100), await submitAt(first, b.stepId, 500)];
    for (const [i, { set, after }] of kept.entries()) expect(after, `kept ${i}`).toBe(set);
    // The status changes (the plans complete), or the time is more than a second
    // old: the submit's own time.
    const moved = [
      await submitAt(first, c.stepId, -100),
      await submitAt(second, d.stepId, -5000),
      await submitAt(second, e.stepId, -100),
    ];
    for (const [i, { set, before, after }] of moved.entries()) {
      expect(after, `moved ${i}`).not.toBe(set);
      // The database's clock may differ from Node's by a little.
      expect(after, `moved ${i}`).toBeGreaterThan(before - 50);
    }
    expect((await tenant.agent.ok("get_plan_status", { planId: first })).status).toBe("completed");
    expect((await tenant.agent.ok("get_plan_status", { planId: second })).status).toBe("completed");
  });

  it("holds a pause: agent A's submit does not complete the plan around B's failed server step", async () => {
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Pause holds",
      researchQuestion: "q",
      steps: [
        ...planSteps("search"),
        {
          stepType: "extract",
          instructions: "Extract prices.",
          tool: "extract_data",
          arguments: {
            schema: { type: "object", properties: { price: { type: "number" } } },
            text: "A heat pump costs 9000 euros.",
          },
        },
      ],
    });
    const a = tenant.agent;
    const b = inProcessAgent(tenant.agent.ctx);
    const first = await a.ok("get_next_step", { planId });
    expect(first.step.stepOrder).toBe(1);
    // No model is configured: B's pull runs step 2, whose tool fails, and the plan pauses.
    const paused = await b.ok("get_next_step", { planId });
    expect(paused).toMatchObject({ status: "paused", pauseReason: { type: "tool_error" } });

    const submitted = await a.submit(planId, first.step.stepId);
    expect(submitted.planStatus).toBe("executing");
    const status = await a.ok("get_plan_status", { planId });
    expect(status).toMatchObject({ status: "executing", pauseReason: { type: "tool_error" } });
    expect((await b.ok("get_next_step", { planId })).status).toBe("paused");

    // The pause's suggested call finishes the paused step, and then the plan.
    const call = paused.pauseReason.suggestedTool;
    const unblocked = await b.call(call.name, { ...call.arguments, result: { price: 9000 } });
    expect(unblocked.isError).toBe(false);
    expect((await a.ok("get_next_step", { planId })).status).toBe("plan_complete");
  });

  it("holds a pause against a failure too: a gate that would fail the plan around it is a CONFLICT", async () => {
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Pause holds against a fail",
      researchQuestion: "q",
      steps: [
        ...planSteps("search"),
        {
          stepType: "extract",
          instructions: "Extract prices.",
          tool: "extract_data",
          arguments: { schema: { type: "object" }, text: "A heat pump costs 9000 euros." },
        },
      ],
      branchingConditions: [
        { afterStepOrder: 1, conditionExpression: "result.dead === true", ifTrueAction: "fail" },
      ],
    });
    const a = tenant.agent;
    const b = inProcessAgent(tenant.agent.ctx);
    const first = await a.ok("get_next_step", { planId });
    const paused = await b.ok("get_next_step", { planId });
    expect(paused).toMatchObject({ status: "paused", pauseReason: { type: "tool_error" } });
    const refused = await a.fails("submit_step_result", {
      ...plainResult(planId, first.step.stepId),
      result: { dead: true },
    });
    expect(refused).toMatch(/^CONFLICT: Plan .* is paused on step 2, whose tool failed/);
    expect(await a.ok("get_plan_status", { planId })).toMatchObject({
      status: "executing",
      pauseReason: { type: "tool_error" },
    });
    // Once the pause is answered (here: its step retried), the same result fails the plan.
    await a.ok("modify_plan", {
      planId,
      action: "retry_step",
      stepId: paused.pauseReason.stepId,
      modificationRationale: "Try the tool again later.",
    });
    const failed = await a.ok("submit_step_result", {
      ...plainResult(planId, first.step.stepId),
      result: { dead: true },
    });
    expect(failed.planStatus).toBe("failed");
  });
});
