/**
 * fork_plan decided (docs/history-and-forks.md): which of the source plan's
 * steps the fork carries with their results, from which step it starts again
 * (pending, with the edits applied), and the refusals. A carried checkpoint
 * counts only as the checkpoint rule says (`carriedDecisionCounts`,
 * checkpoint-guard.ts): where it does not, the fork starts at that checkpoint
 * instead, so a person (or, where the team lets agents relay, the agent)
 * decides it again and nothing after it is carried past it.
 */
import { AppError } from "./app-error";
import { type CarriedDecision, carriedDecisionCounts } from "./checkpoint-guard";
import type { DecisionPolicy, StepStatus, StepType } from "./states";

export type ForkSourceStep = {
  id: string;
  stepOrder: number;
  stepType: StepType;
  status: StepStatus;
  instructions: string;
  arguments: Record<string, unknown> | null;
  /** A checkpoint's last decision, with the digest over the step as it is now; null when none. */
  decision: CarriedDecision | null;
};

export type StepEdit = {
  stepId: string;
  instructions?: string | undefined;
  arguments?: Record<string, unknown> | undefined;
};

export type ForkDecision = {
  /** The order the fork starts again at: the asked step's, or an earlier checkpoint's that does not carry. */
  startOrder: number;
  /** Every step of the fork, in order: carried (with its result) or pending with its edits. */
  steps: {
    sourceStepId: string;
    stepOrder: number;
    carried: boolean;
    instructions: string;
    arguments: Record<string, unknown> | null;
    edited: boolean;
  }[];
  /** Set when a carried checkpoint's decision did not count: why the fork starts there. */
  reopened: { stepOrder: number; reason: string } | null;
};

/** Who passed a carried checkpoint whose decision does not count under people_only, in a refusal's words. */
function passedBy(decision: CarriedDecision): string {
  if (decision.channel === "deadline") return "decided by its deadline";
  if (decision.channel === "relayed") return "decided by an agent relaying a person";
  return "handed back to the agent by a person's modify, and completed by the agent";
}

/** The statuses a carried step may have: a fork carries only work that is done. */
const CARRIABLE: readonly StepStatus[] = ["completed", "skipped"];

export function decideFork(
  planId: string,
  stepsRead: readonly ForkSourceStep[],
  fromStepId: string,
  edits: readonly StepEdit[],
  policy: DecisionPolicy,
): ForkDecision {
  const steps = [...stepsRead].sort((a, b) => a.stepOrder - b.stepOrder);
  const from = steps.find((step) => step.id === fromStepId);
  if (!from) {
    throw new AppError(
      "NOT_FOUND",
      `Plan ${planId} has no step ${fromStepId}. Call get_research_context to see the plan's steps and their ids.`,
      { planId, stepId: fromStepId },
    );
  }
  let startOrder = from.stepOrder;
  let reopened: ForkDecision["reopened"] = null;
  for (const step of steps) {
    if (step.stepOrder >= startOrder) break;
    if (!CARRIABLE.includes(step.status)) {
      throw new AppError(
        "INVALID_TRANSITION",
        `Step ${step.stepOrder} of plan ${planId} is ${step.status}; a fork carries only steps that are completed or skipped. Fork from step ${step.stepOrder} or an earlier one. Nothing was made.`,
        { stepOrder: step.stepOrder, stepStatus: step.status },
      );
    }
    if (step.stepType === "checkpoint" && !carriedDecisionCounts(policy, step.decision)) {
      startOrder = step.stepOrder;
      reopened = {
        stepOrder: step.stepOrder,
        reason:
          step.decision === null
            ? `checkpoint step ${step.stepOrder} was passed without a person's decision, and this team lets only people decide checkpoints`
            : step.decision.decidedDigest !== step.decision.currentDigest
              ? `what checkpoint step ${step.stepOrder} showed changed after it was decided`
              : `checkpoint step ${step.stepOrder} was ${passedBy(step.decision)}, and this team lets only people decide checkpoints`,
      };
    }
  }
  const byId = new Map(steps.map((step) => [step.id, step]));
  const editOf = new Map<string, StepEdit>();
  for (const edit of edits) {
    const step = byId.get(edit.stepId);
    if (!step) {
      throw new AppError(
        "INVALID_STEP_REFERENCE",
        `stepEdits names step ${edit.stepId}, which is not in plan ${planId}. Nothing was made.`,
        { stepId: edit.stepId },
      );
    }
    if (editOf.has(edit.stepId)) {
      throw new AppError(
        "VALIDATION_ERROR",
        `stepEdits names step ${step.stepOrder} twice; give each step's edits once. Nothing was made.`,
        { stepId: edit.stepId },
      );
    }
    if (edit.instructions === undefined && edit.arguments === undefined) {
      throw new AppError(
        "VALIDATION_ERROR",
        `stepEdits for step ${step.stepOrder} changes nothing: give instructions, arguments or both.`,
        { stepId: edit.stepId },
      );
    }
    if (step.stepOrder < startOrder) {
      throw new AppError(
        "VALIDATION_ERROR",
        `Step ${step.stepOrder} comes before step ${startOrder}, where the fork starts, so it is carried with its result as it was; to change it, fork from step ${step.stepOrder}. Nothing was made.`,
        { stepId: edit.stepId, startOrder },
      );
    }
    editOf.set(edit.stepId, edit);
  }
  return {
    startOrder,
    reopened,
    steps: steps.map((step) => {
      const edit = editOf.get(step.id);
      const instructions = edit?.instructions ?? step.instructions;
      const args = edit?.arguments ?? step.arguments;
      return {
        sourceStepId: step.id,
        stepOrder: step.stepOrder,
        carried: step.stepOrder < startOrder,
        instructions,
        arguments: args,
        // An edit that gives a step what it has (a form sends every step) is none.
        edited:
          instructions !== step.instructions ||
          JSON.stringify(args) !== JSON.stringify(step.arguments),
      };
    }),
  };
}
