/**
 * What a person's answer at a checkpoint does to the step and the plan
 * (docs/execution-loop.md).
 */
import type { PlanStatus, ReviewDecision, StepStatus } from "./states";

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
 * `awaiting_review`; the plan's stored status is decided by `decideReviewDecision`
 * (loop.ts), since the reviewed step may have been the last open one.
 */
export function applyReviewDecision(decision: ReviewDecision): ReviewOutcome {
  return REVIEW_OUTCOMES[decision];
}

/**
 * `modify` appends the person's feedback to the step's instructions, after a
 * horizontal rule and a "User feedback:" prefix (docs/execution-loop.md, "User
 * decisions"), so the AI platform re-runs the step with the original task and
 * the new guidance side by side.
 */
export function appendUserFeedback(instructions: string, feedback: string): string {
  return `${instructions}\n\n---\n\nUser feedback: ${feedback}`;
}
