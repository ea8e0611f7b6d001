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

/** What `modify` puts between a step's instructions and a person's feedback. */
const USER_FEEDBACK_MARK = "\n\n---\n\nUser feedback: ";

/**
 * `modify` appends the person's feedback to the step's instructions, after a
 * horizontal rule and a "User feedback:" prefix (docs/execution-loop.md), so
 * the AI platform re-runs the step with the original task and the new guidance
 * side by side.
 */
export function appendUserFeedback(instructions: string, feedback: string): string {
  return `${instructions}${USER_FEEDBACK_MARK}${feedback}`;
}

/** The reverse of `appendUserFeedback`: the original instructions, and each feedback in order. */
export function splitUserFeedback(instructions: string): {
  original: string;
  feedback: string[];
} {
  const [original = "", ...feedback] = instructions.split(USER_FEEDBACK_MARK);
  return { original, feedback };
}
