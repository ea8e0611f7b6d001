/**
 * submit_step_result on a step nobody has pulled yet (the timing edge case),
 * a submit that must not complete a plan paused on a failed server step, and
 * the plan's activity time a submit moves. In process, on PGlite and on
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

  it("moves the plan's activity time unless it lies in the second before, on both submit paths", async () => {
    const { planId, steps } = await tenant.agent.ok("create_research_plan", {
      name: "Activity",
      researchQuestion: "q",
      steps: [
        ...planSteps("search"),
        // An output schema takes the submit's full path (complete-step.ts).
        { ...planSteps("analyze")[0], outputSchema: { type: "object" } },
        ...planSteps("synthesize"),
      ],
    });
    const { db } = tenant.handle;
    /** Sets the plan's activity time `ago` ms back, and reads it as milliseconds since the epoch. */
    const setBack = async (ago: number) =>
      (
        await readRows<{ at: number }>(
          db,
          sql`update research_plan set updated_at = now() - make_interval(secs => ${ago / 1000})
            where id = ${planId}::uuid
            returning (extract(epoch from updated_at) * 1000)::float8 as at`,
        )
      )[0]?.at;
    const activity = async () =>
      (
        await readRows<{ at: number }>(
          db,
          sql`select (extract(epoch from updated_at) * 1000)::float8 as at
            from research_plan where id = ${planId}::uuid`,
        )
      )[0]?.at;

    for (const [i, step] of steps.entries()) {
      await tenant.agent.ok("get_next_step", { planId });
      // Within the second before: the submit keeps it (the row's update can be HOT).
      const recent = await setBack(300);
      await tenant.agent.submit(planId, step.stepId);
      expect(await activity(), `step ${i + 1}`).toBe(recent);
    }
    const { planId: second, steps: next } = await tenant.agent.ok("create_research_plan", {
      name: "Activity, older",
      researchQuestion: "q",
      steps: [
        { ...planSteps("analyze")[0], outputSchema: { type: "object" } },
        ...planSteps("search"),
      ],
    });
    for (const step of next) {
      await tenant.agent.ok("get_next_step", { planId: second });
      await db.execute(
        sql`update research_plan set updated_at = now() - interval '5 seconds' where id = ${second}::uuid`,
      );
      const before = Date.now();
      await tenant.agent.submit(second, step.stepId);
      const [row] = await readRows<{ at: number }>(
        db,
        sql`select (extract(epoch from updated_at) * 1000)::float8 as at from research_plan where id = ${second}::uuid`,
      );
      // Older than a second: the submit's own time (the database's clock may trail Node's by a little).
      expect(row?.at).toBeGreaterThan(before - 1000);
    }
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
