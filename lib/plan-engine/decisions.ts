/**
 * What a person's answer at a checkpoint does to the step and the plan
 * (execution-loop.md, "User decisions").
 */
import type { PlanStatus, ReviewDecision, StepStatus } from "./states";
import { derivePlanStatus } from "./transitions";

export interface ReviewOutcome {
  /** The step's next status; always a valid move from `awaiting_input`. */
  readonly stepStatus: StepStatus;
  /** The plan's next status; always a valid move from `awaiting_review`. */
  readonly planStatus: PlanStatus;
}

const REVIEW_OUTCOMES: Readonly<Record<ReviewDecision, ReviewOutcome>> = {
  approve: { stepStatus: "completed", planStatus: "executing" },
  reject: { stepStatus: "failed", planStatus: "failed" },
  modify: { stepStatus: "in_progress", planStatus: "executing" },
  skip: { stepStatus: "skipped", planStatus: "executing" },
};

/**
 * The decision table as written. `planStatus` is the immediate move out of
 * `awaiting_review`; after `approve` or `skip` the reviewed step may have been the
 * last open one, so the caller must still run `derivePlanStatus` over all steps
 * (or call `planStatusAfterDecision`) to learn whether the plan is now complete.
 */
export function applyReviewDecision(decision: ReviewDecision): ReviewOutcome {
  return REVIEW_OUTCOMES[decision];
}

/**
 * The plan status to store once the decision's step change is applied.
 * `reject` is one of the two ways a plan fails (branching-conditions.md, "fail"),
 * so it overrides the derivation, which would otherwise treat the failed step as
 * terminal and could answer `completed`.
 */
export function planStatusAfterDecision(
  decision: ReviewDecision,
  stepStatusesAfter: readonly StepStatus[],
): PlanStatus {
  if (decision === "reject") return "failed";
  return derivePlanStatus(stepStatusesAfter);
}

/**
 * `modify` appends the person's feedback to the step's instructions, after a
 * horizontal rule and a "User feedback:" prefix (execution-loop.md, "User
 * decisions"), so the AI platform re-runs the step with the original task and
 * the new guidance side by side.
 */
export function appendUserFeedback(instructions: string, feedback: string): string {
  return `${instructions}\n\n---\n\nUser feedback: ${feedback}`;
}
