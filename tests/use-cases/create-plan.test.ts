/**
 * create_research_plan refuses bad step references and unparseable conditions,
 * writing nothing.
 * In process, on PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("create_research_plan on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("rejects bad references and unparseable conditions at creation, writing nothing", async () => {
    const before = (await tenant.agent.ok("list_active_plans", { limit: 100 })).plans.length;
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: planSteps("search"),
        branchingConditions: [
          { afterStepOrder: 2, conditionExpression: "confidence > 1", ifTrueAction: "fail" },
        ],
      }),
    ).toMatch(/^INVALID_STEP_REFERENCE: branchingConditions\[0\]\.afterStepOrder is 2/);
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: planSteps("search", "analyze"),
        branchingConditions: [
          {
            afterStepOrder: 1,
            conditionExpression: "skip_to",
            ifTrueAction: "skip_to",
            actionParams: { targetStepOrder: 9 },
          },
        ],
      }),
    ).toMatch(/^INVALID_CONDITION: .*no comparison operator/);
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: planSteps("search", "analyze"),
        branchingConditions: [
          {
            afterStepOrder: 1,
            conditionExpression: "confidence > 0.5",
            ifTrueAction: "skip_to",
            actionParams: { targetStepOrder: 9 },
          },
        ],
      }),
    ).toMatch(/^INVALID_STEP_REFERENCE: .*targetStepOrder is 9/);
    expect((await tenant.agent.ok("list_active_plans", { limit: 100 })).plans.length).toBe(before);
  });

  it("refuses a gate that could never fire, and a field it does not know, naming what was meant", async () => {
    const before = (await tenant.agent.ok("list_active_plans", { limit: 100 })).plans.length;
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: planSteps("search", "analyze"),
        branchingConditions: [
          { afterStepOrder: 1, conditionExpression: "score >= 80", ifTrueAction: "fail" },
        ],
      }),
    ).toMatch(/^INVALID_CONDITION: .*"score >= 80" would never fire.*Did you mean result\.score\?/);
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: planSteps("search"),
        branchingCondition: [
          { afterStepOrder: 1, conditionExpression: "confidence > 0.5", ifTrueAction: "fail" },
        ],
      }),
    ).toMatch(
      /^VALIDATION_ERROR: Unknown field branchingCondition \(did you mean branchingConditions\?\)/,
    );
    expect(
      await tenant.agent.fails("request_user_review", {
        planId: "00000000-0000-4000-8000-000000000000",
        stepId: "00000000-0000-4000-8000-000000000000",
        summary: "s",
        reviewNote: "unknown",
      }),
    ).toMatch(/^VALIDATION_ERROR: Unknown field.* reviewNote/);
    expect((await tenant.agent.ok("list_active_plans", { limit: 100 })).plans.length).toBe(before);
  });
  it("answers the stored plan: its steps in order and each condition with the step it follows and targets", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Answer",
      researchQuestion: "q",
      steps: planSteps("search", "extract", "analyze", "synthesize"),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.sourceCount < 2",
          ifTrueAction: "skip_to",
          actionParams: { targetStepOrder: 4 },
        },
        {
          afterStepOrder: 3,
          conditionExpression: "confidence < 0.2",
          ifTrueAction: "fail",
          actionParams: { reason: "Too unsure." },
        },
      ],
    });
    const stepIds = created.steps.map((step: { stepId: string }) => step.stepId);
    expect(new Set(stepIds).size).toBe(4);
    expect(created).toMatchObject({
      status: "planning",
      steps: [
        { stepOrder: 1, stepType: "search" },
        { stepOrder: 2, stepType: "extract" },
        { stepOrder: 3, stepType: "analyze" },
        { stepOrder: 4, stepType: "synthesize" },
      ],
      firstStep: {
        stepId: stepIds[0],
        stepOrder: 1,
        stepType: "search",
        instructions: "Step 1: do the search work.",
      },
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.sourceCount < 2",
          ifTrueAction: "skip_to",
          // The target is stored as its step's id, beside the order given.
          actionParams: { targetStepOrder: 4, stepId: stepIds[3] },
        },
        {
          afterStepOrder: 3,
          conditionExpression: "confidence < 0.2",
          ifTrueAction: "fail",
          actionParams: { reason: "Too unsure." },
        },
      ],
    });
    expect(created.branchingConditions[1].actionParams).not.toHaveProperty("stepId");
    // The skip fires on the stored target: step 1's result skips to step 4.
    const one = await tenant.agent.ok("get_next_step", { planId: created.planId });
    await tenant.agent.submit(created.planId, one.step.stepId, { result: { sourceCount: 1 } });
    const next = await tenant.agent.ok("get_next_step", { planId: created.planId });
    expect(next.step).toMatchObject({ stepId: stepIds[3], stepOrder: 4 });
  });
});
