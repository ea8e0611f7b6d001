/**
 * What the loop's deciders read of a plan (the service reads it, locked where
 * it writes on it): every step's status and type, its pending reviews, a fired
 * `add_steps` it waits on and a server-run step it is paused on; and the
 * branching conditions a step's completion evaluates.
 */
import type { PlanStatus, StepStatus, StepType } from "./states";

export type LoopStep = {
  id: string;
  stepOrder: number;
  status: StepStatus;
  /** The step's type: a branch never skips a `checkpoint`, and an undecided one holds the steps after it. */
  stepType: StepType;
};

export type LoopCondition = {
  id: string;
  conditionExpression: string;
  ifTrueAction: string;
  actionParams: Record<string, unknown>;
};

/** A fired `add_steps` the agent has not acted on yet (stored on the plan row). */
export type AwaitingSteps = {
  conditionId: string;
  conditionExpression: string;
  stepId: string;
  stepOrder: number;
  params: Record<string, unknown>;
};

export type PlanSnapshot = {
  id: string;
  status: PlanStatus;
  awaitingSteps: AwaitingSteps | null;
  /** Every step of the plan, in any order. */
  steps: readonly LoopStep[];
  /** The plan's reviews still waiting for a person. */
  pendingReviews: readonly { id: string; stepId: string }[];
  /** The server-run step whose tool failed and on which the plan is paused, if any. */
  pausedOnFailedStepId?: string | null;
};
