/**
 * Branching conditions when a step's result is submitted (submit_step_result):
 * skip_to, a condition that does not hold, fail and add_steps (docs/branching-conditions.md).
 * In process, on PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("branching on submit_step_result on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("branching: skip_to skips the pending steps up to its target", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Skip",
      researchQuestion: "q",
      steps: planSteps("search", "extract", "analyze", "synthesize"),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "confidence > 0.8",
          ifTrueAction: "skip_to",
          actionParams: { targetStepOrder: 4 },
        },
      ],
    });
    const planId = created.planId;
    const first = await tenant.agent.ok("get_next_step", { planId });
    const submitted = await tenant.agent.submit(planId, first.step.stepId, { confidence: 0.9 });
    expect(submitted.firedConditions).toEqual([
      expect.objectContaining({
        action: "skip_to",
        skippedStepIds: [created.steps[1].stepId, created.steps[2].stepId],
      }),
    ]);
    const next = await tenant.agent.ok("get_next_step", { planId });
    expect(next.step.stepOrder).toBe(4);
    expect((await tenant.agent.submit(planId, next.step.stepId)).planStatus).toBe("completed");
    const context = await tenant.agent.ok("get_research_context", { planId });
    expect(context.steps.map((s: { status: string }) => s.status)).toEqual([
      "completed",
      "skipped",
      "skipped",
      "completed",
    ]);
    expect(context.branchingConditions[0]).toMatchObject({ afterStepOrder: 1, fired: true });
  });
  it("branching: a condition that does not hold changes nothing", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "No skip",
      researchQuestion: "q",
      steps: planSteps("search", "analyze"),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.hasData === false",
          ifTrueAction: "fail",
        },
      ],
    });
    const first = await tenant.agent.ok("get_next_step", { planId: created.planId });
    const submitted = await tenant.agent.submit(created.planId, first.step.stepId, {
      result: { hasData: true },
    });
    expect(submitted).toMatchObject({
      conditionsEvaluated: 1,
      firedConditions: [],
      planStatus: "executing",
    });
  });
  it("branching: fail fails the plan and add_steps asks for steps", async () => {
    const failing = await tenant.agent.ok("create_research_plan", {
      name: "Fail",
      researchQuestion: "q",
      steps: planSteps("search", "analyze"),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.sourceCount < 3",
          ifTrueAction: "fail",
          actionParams: { reason: "too few sources" },
        },
        { afterStepOrder: 1, conditionExpression: "confidence >= 0", ifTrueAction: "add_steps" },
      ],
    });
    const step = await tenant.agent.ok("get_next_step", { planId: failing.planId });
    const failed = await tenant.agent.submit(failing.planId, step.step.stepId, {
      result: { sourceCount: 1 },
    });
    expect(failed.planStatus).toBe("failed");
    expect(failed.firedConditions).toEqual([expect.objectContaining({ action: "fail" })]);
    expect((await tenant.agent.ok("get_next_step", { planId: failing.planId })).status).toBe(
      "plan_failed",
    );

    const growing = await tenant.agent.ok("create_research_plan", {
      name: "Grow",
      researchQuestion: "q",
      steps: planSteps("search", "critique"),
      branchingConditions: [
        {
          afterStepOrder: 2,
          conditionExpression: "result.gaps > 0",
          ifTrueAction: "add_steps",
          actionParams: { focus: "fill the gaps" },
        },
      ],
    });
    const a = await tenant.agent.ok("get_next_step", { planId: growing.planId });
    await tenant.agent.submit(growing.planId, a.step.stepId);
    const b = await tenant.agent.ok("get_next_step", { planId: growing.planId });
    const grown = await tenant.agent.submit(growing.planId, b.step.stepId, { result: { gaps: 2 } });
    expect(grown.firedConditions).toEqual([
      expect.objectContaining({ action: "add_steps", addStepsParams: { focus: "fill the gaps" } }),
    ]);
    expect(grown.hint).toMatch(/modify_plan/);
    // Listed as waiting for the agent's steps, not as simply running.
    const { plans } = await tenant.agent.ok("list_active_plans", { limit: 100 });
    expect(plans.find((p) => p.planId === growing.planId)).toMatchObject({
      status: "executing",
      awaitingSteps: true,
    });
    expect(
      plans.find((p) => p.planId !== growing.planId && p.status === "executing"),
    ).toMatchObject({ awaitingSteps: false });
  });

  it("branching: a fired add_steps before the last step holds get_next_step until the agent adds steps or declines", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Hold",
      researchQuestion: "q",
      steps: planSteps("search", "analyze", "synthesize"),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.sourceCount < 5",
          ifTrueAction: "add_steps",
          actionParams: { focus: "more sources" },
        },
      ],
    });
    const planId = created.planId;
    const first = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, first.step.stepId, { result: { sourceCount: 2 } });

    // The analyze step is not handed out: the answer names the call that answers the gate.
    const held = await tenant.agent.ok("get_next_step", { planId });
    expect(held).toMatchObject({
      status: "awaiting_steps",
      condition: { stepOrder: 1, params: { focus: "more sources" } },
    });
    expect(held.hint).toContain('action: "add_steps", insertAfterOrder: 1');
    expect(held.hint).toContain("decline_add_steps");
    expect((await tenant.agent.ok("get_next_step", { planId })).status).toBe("awaiting_steps");

    // The added step lands right after step 1 and is the next one handed out.
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "add_steps",
      insertAfterOrder: 1,
      steps: [{ stepType: "search", instructions: "Find three more sources." }],
      modificationRationale: "Only 2 sources found.",
    });
    const added = await tenant.agent.ok("get_next_step", { planId });
    expect(added.step).toMatchObject({ stepOrder: 2, stepType: "search" });

    // Declining releases a held plan just the same.
    const other = await tenant.agent.ok("create_research_plan", {
      name: "Hold, declined",
      researchQuestion: "q",
      steps: planSteps("search", "analyze"),
      branchingConditions: [
        { afterStepOrder: 1, conditionExpression: "confidence >= 0", ifTrueAction: "add_steps" },
      ],
    });
    const one = await tenant.agent.ok("get_next_step", { planId: other.planId });
    await tenant.agent.submit(other.planId, one.step.stepId);
    expect((await tenant.agent.ok("get_next_step", { planId: other.planId })).status).toBe(
      "awaiting_steps",
    );
    await tenant.agent.ok("modify_plan", {
      planId: other.planId,
      action: "decline_add_steps",
      modificationRationale: "Enough sources already.",
    });
    const two = await tenant.agent.ok("get_next_step", { planId: other.planId });
    expect(two.step).toMatchObject({ stepOrder: 2, stepType: "analyze" });
  });
});
