/**
 * The four branch actions and how a fired condition turns into one
 * (docs/branching-conditions.md, "Actions" and "Evaluation
 * Flow"). The engine decides which steps to skip or whether the
 * plan fails; the service performs it.
 */
import { type ConditionContext, evaluateCondition } from "./conditions";
import type { StepStatus } from "./states";

export const BRANCH_ACTIONS = ["skip_to", "add_steps", "fail", "continue"] as const;
export type BranchActionType = (typeof BRANCH_ACTIONS)[number];

export type BranchAction =
  | { readonly type: "skip_to"; readonly targetStepId: string }
  | { readonly type: "add_steps"; readonly params: Readonly<Record<string, unknown>> }
  | { readonly type: "fail"; readonly reason?: string }
  | { readonly type: "continue" };

function ownString(
  params: Readonly<Record<string, unknown>> | null | undefined,
  key: string,
): string | undefined {
  if (params === null || params === undefined || !Object.hasOwn(params, key)) return undefined;
  const value = params[key];
  return typeof value === "string" ? value : undefined;
}

/**
 * Turns a stored `ifTrueAction` string into a typed action.
 *
 * - An unknown string is `continue`, the reference design's default for unrecognised actions.
 * - `skip_to` without a string `actionParams.stepId` is also `continue`: with no
 *   target the reference design's walk would skip every remaining pending step, turning a
 *   malformed condition into silent data loss; doing nothing is the safe reading.
 * - `add_steps` only signals; the AI platform inserts the steps through
 *   `modify_plan`, so its params are passed along untouched.
 * - `fail` carries `actionParams.reason` when it is a string, for the audit row.
 */
export function resolveBranchAction(
  ifTrueAction: string,
  actionParams: Readonly<Record<string, unknown>> | null | undefined,
): BranchAction {
  switch (ifTrueAction) {
    case "skip_to": {
      const targetStepId = ownString(actionParams, "stepId");
      return targetStepId === undefined ? { type: "continue" } : { type: "skip_to", targetStepId };
    }
    case "add_steps":
      return { type: "add_steps", params: actionParams ?? {} };
    case "fail": {
      const reason = ownString(actionParams, "reason");
      return reason === undefined ? { type: "fail" } : { type: "fail", reason };
    }
    default:
      return { type: "continue" };
  }
}

export interface SkippableStep {
  readonly id: string;
  readonly stepOrder: number;
  readonly status: StepStatus;
  /** A `checkpoint` is never skipped by a branch; absent, the step is not one. */
  readonly stepType?: string;
}

/**
 * The ids of the steps a `skip_to` moves to `skipped`: the reference design's `skipStepsTo`
 * walk in step order, which after the current step skips every `pending` step
 * and stops at the target. Completed, failed or running steps in between are
 * left as they are (only `pending -> skipped` is a valid step transition), and
 * so is a `checkpoint`: a person's pause is never skipped by a branch, it is
 * handed out next (docs/branching-conditions.md).
 *
 * If the target is not found after the current step (it lies before it, is the
 * current step, or does not exist), the answer is `[]`: the reference design's walk would
 * then run to the end of the plan and skip everything, which no condition
 * author can have meant.
 */
export function stepsToSkip(
  steps: readonly SkippableStep[],
  currentStepId: string,
  targetStepId: string,
): string[] {
  const ordered = [...steps].sort((a, b) => a.stepOrder - b.stepOrder);
  const currentIndex = ordered.findIndex((step) => step.id === currentStepId);
  if (currentIndex === -1) return [];

  const skipped: string[] = [];
  for (const step of ordered.slice(currentIndex + 1)) {
    if (step.id === targetStepId) return skipped;
    // A checkpoint is a pause for a person: a branch passes over it and it
    // still comes next, so only a person's decision gets a plan past it.
    if (step.status === "pending" && step.stepType !== "checkpoint") skipped.push(step.id);
  }
  return [];
}

export interface BranchingConditionInput {
  readonly id: string;
  readonly conditionExpression: string;
  readonly ifTrueAction: string;
  readonly actionParams: Readonly<Record<string, unknown>> | null | undefined;
}

export interface FiredBranch {
  readonly conditionId: string;
  readonly action: BranchAction;
}

export interface BranchingOutcome {
  readonly fired: FiredBranch[];
  readonly planFailed: boolean;
}

/**
 * Evaluates a step's conditions in the given order and lists the actions of
 * those that hold. The first `fail` ends the evaluation with `planFailed: true`
 * and no later condition is looked at (docs/branching-conditions.md, "Evaluation
 * Flow", step 4). The caller passes the conditions in their stored order.
 */
export function evaluateBranching(
  conditions: readonly BranchingConditionInput[],
  context: ConditionContext,
): BranchingOutcome {
  const fired: FiredBranch[] = [];
  for (const condition of conditions) {
    if (!evaluateCondition(condition.conditionExpression, context)) continue;
    const action = resolveBranchAction(condition.ifTrueAction, condition.actionParams);
    fired.push({ conditionId: condition.id, action });
    if (action.type === "fail") return { fired, planFailed: true };
  }
  return { fired, planFailed: false };
}
