import { describe, expect, it } from "vitest";
import {
  BRANCH_ACTIONS,
  type BranchingConditionInput,
  evaluateBranching,
  resolveBranchAction,
  type SkippableStep,
  stepsToSkip,
} from "./branch-actions";
import { buildConditionContext } from "./conditions";

describe("resolveBranchAction", () => {
  it("knows the four actions of the spec", () => {
    expect(BRANCH_ACTIONS).toEqual(["skip_to", "add_steps", "fail", "continue"]);
  });

  it("resolves skip_to with its target step id", () => {
    expect(resolveBranchAction("skip_to", { stepId: "s5" })).toEqual({
      type: "skip_to",
      targetStepId: "s5",
    });
  });

  it.each<[string, Record<string, unknown> | null | undefined]>([
    ["no params", undefined],
    ["null params", null],
    ["no stepId", {}],
    ["a numeric stepId", { stepId: 5 }],
    ["a null stepId", { stepId: null }],
    ["stepOrder instead of stepId", { stepOrder: 3 }],
  ])("turns skip_to with %s into continue", (_label, params) => {
    expect(resolveBranchAction("skip_to", params)).toEqual({ type: "continue" });
  });

  it("does not read stepId from the prototype chain", () => {
    const params = Object.create({ stepId: "inherited" }) as Record<string, unknown>;
    expect(resolveBranchAction("skip_to", params)).toEqual({ type: "continue" });
  });

  it("passes add_steps params through", () => {
    const params = { steps: [{ title: "Dig deeper" }] };
    expect(resolveBranchAction("add_steps", params)).toEqual({ type: "add_steps", params });
    expect(resolveBranchAction("add_steps", null)).toEqual({ type: "add_steps", params: {} });
  });

  it("resolves fail with an optional reason", () => {
    expect(resolveBranchAction("fail", { reason: "too little data" })).toEqual({
      type: "fail",
      reason: "too little data",
    });
    expect(resolveBranchAction("fail", undefined)).toEqual({ type: "fail" });
    expect(resolveBranchAction("fail", { reason: 7 })).toEqual({ type: "fail" });
  });

  it("resolves continue", () => {
    expect(resolveBranchAction("continue", { stepId: "x" })).toEqual({ type: "continue" });
  });

  it.each(["", "FAIL", "Skip_To", " fail", "stop", "toString", "__proto__", "constructor"])(
    "treats the unknown action %j as continue",
    (action) => {
      expect(resolveBranchAction(action, { stepId: "s2", reason: "r" })).toEqual({
        type: "continue",
      });
    },
  );
});

describe("stepsToSkip", () => {
  const plan: SkippableStep[] = [
    { id: "s1", stepOrder: 1, status: "completed" },
    { id: "s2", stepOrder: 2, status: "completed" },
    { id: "s3", stepOrder: 3, status: "pending" },
    { id: "s4", stepOrder: 4, status: "completed" },
    { id: "s5", stepOrder: 5, status: "failed" },
    { id: "s6", stepOrder: 6, status: "pending" },
    { id: "s7", stepOrder: 7, status: "pending" },
    { id: "s8", stepOrder: 8, status: "pending" },
  ];

  it("never skips a checkpoint: it stays pending and comes next", () => {
    const withCheckpoint = plan.map((step) =>
      step.id === "s6" ? { ...step, stepType: "checkpoint" } : { ...step, stepType: "search" },
    );
    expect(stepsToSkip(withCheckpoint, "s2", "s8")).toEqual(["s3", "s7"]);
  });

  it("skips only the pending steps between current and target", () => {
    expect(stepsToSkip(plan, "s2", "s7")).toEqual(["s3", "s6"]);
  });

  it("stops at the target and leaves it and later steps alone", () => {
    expect(stepsToSkip(plan, "s2", "s6")).toEqual(["s3"]);
  });

  it("leaves completed and failed steps untouched", () => {
    expect(stepsToSkip(plan, "s3", "s6")).toEqual([]);
  });

  it("skips nothing when the target directly follows the current step", () => {
    expect(stepsToSkip(plan, "s2", "s3")).toEqual([]);
  });

  it("walks in step order, not array order", () => {
    const shuffled = [plan[6], plan[0], plan[5], plan[2], plan[1], plan[7]].filter(
      (step): step is SkippableStep => step !== undefined,
    );
    expect(stepsToSkip(shuffled, "s2", "s8")).toEqual(["s3", "s6", "s7"]);
  });

  it.each([
    ["target before current", "s6", "s3"],
    ["target is current", "s3", "s3"],
    ["unknown target", "s2", "nope"],
    ["unknown current", "nope", "s6"],
  ])("skips nothing for %s", (_label, current, target) => {
    expect(stepsToSkip(plan, current, target)).toEqual([]);
  });

  it("skips nothing in an empty plan", () => {
    expect(stepsToSkip([], "a", "b")).toEqual([]);
  });
});

describe("evaluateBranching", () => {
  const context = buildConditionContext({ confidence: 0.9, result: { hasData: false } });

  const condition = (
    id: string,
    conditionExpression: string,
    ifTrueAction: string,
    actionParams: Record<string, unknown> | null = null,
  ): BranchingConditionInput => ({ id, conditionExpression, ifTrueAction, actionParams });

  it("lists the actions of the conditions that hold, in order", () => {
    const outcome = evaluateBranching(
      [
        condition("c1", "confidence > 0.8", "skip_to", { stepId: "s5" }),
        condition("c2", "confidence > 0.95", "fail"),
        condition("c3", 'status === "completed"', "add_steps", { count: 2 }),
        condition("c4", "confidence > 0.5", "whatever"),
      ],
      context,
    );
    expect(outcome).toEqual({
      planFailed: false,
      fired: [
        { conditionId: "c1", action: { type: "skip_to", targetStepId: "s5" } },
        { conditionId: "c3", action: { type: "add_steps", params: { count: 2 } } },
        { conditionId: "c4", action: { type: "continue" } },
      ],
    });
  });

  it("stops at the first fail and looks at no later condition", () => {
    const outcome = evaluateBranching(
      [
        condition("c1", "confidence > 0.5", "continue"),
        condition("c2", "result.hasData === false", "fail", { reason: "no data" }),
        condition("c3", "confidence > 0.5", "fail"),
        condition("c4", "confidence > 0.5", "skip_to", { stepId: "s9" }),
      ],
      context,
    );
    expect(outcome).toEqual({
      planFailed: true,
      fired: [
        { conditionId: "c1", action: { type: "continue" } },
        { conditionId: "c2", action: { type: "fail", reason: "no data" } },
      ],
    });
  });

  it("ignores false and unparseable conditions", () => {
    expect(
      evaluateBranching(
        [
          condition("c1", "confidence < 0.5", "fail"),
          condition("c2", "confidence", "fail"),
          condition("c3", "constructor !== null", "fail"),
          condition("c4", "result.missing !== 1", "fail"),
        ],
        context,
      ),
    ).toEqual({ planFailed: false, fired: [] });
  });

  it("returns nothing for no conditions", () => {
    expect(evaluateBranching([], context)).toEqual({ planFailed: false, fired: [] });
  });
});
