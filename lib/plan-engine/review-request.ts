/**
 * A review's hold on the plan and its request: a waiting review holds the
 * steps after it, and request_user_review decides whether a step may be put
 * up for review.
 */
import { AppError } from "./app-error";
import { checkNotHeldByCheckpoint } from "./checkpoint-guard";
import type { LoopStep, PlanSnapshot } from "./plan-snapshot";
import { canTransitionPlan } from "./transitions";

/**
 * A waiting review holds the steps after it: while a person has not decided
 * the review of step N, no step after N takes a result (the person's decision
 * may change what comes next: reject ends the plan, modify redoes step N).
 * Steps before it, still held by other agents, go on.
 */
export function checkNotHeldByReview(
  plan: Pick<PlanSnapshot, "id" | "pendingReviews"> & {
    steps: readonly Pick<LoopStep, "id" | "stepOrder">[];
  },
  step: Pick<LoopStep, "stepOrder">,
): void {
  for (const review of plan.pendingReviews) {
    const reviewed = plan.steps.find((s) => s.id === review.stepId);
    if (reviewed && reviewed.stepOrder < step.stepOrder) {
      throw new AppError(
        "CONFLICT",
        `Plan ${plan.id} waits for a person's decision on review ${review.id} of step ${reviewed.stepOrder}, and the steps after it take no result until then. Nothing was stored or run: keep your result and send it again after the decision (get_next_step answers awaiting_review until then).`,
        { reviewRequestId: review.id, reviewedStepOrder: reviewed.stepOrder },
      );
    }
  }
}

/**
 * request_user_review: whether the step may be put up for review (a stalled
 * plan resumes on the way to `awaiting_review`). Only the step in progress of an executing plan can be put
 * up for review, and not while the plan is paused on a server-run step: the
 * pause is the agent's to answer, and a review decided around it could leave
 * neither the decision nor the pause's own calls accepted.
 */
export function decideReviewRequest(
  plan: Pick<PlanSnapshot, "id" | "status"> & {
    pause: { stepOrder: number; suggestedTool: string } | null;
    /** The plan's steps, or at least its checkpoints (an undecided one holds the steps after it). */
    steps: readonly Pick<LoopStep, "stepOrder" | "stepType" | "status">[];
  },
  step: Pick<LoopStep, "stepOrder" | "status">,
): void {
  if (!(plan.status === "stalled" || canTransitionPlan(plan.status, "awaiting_review"))) {
    throw new AppError(
      "INVALID_TRANSITION",
      `Plan ${plan.id} is ${plan.status}; a review can only be requested while it is executing.` +
        (plan.status === "awaiting_review"
          ? " A review is already pending: wait for the person's decision."
          : plan.status === "planning"
            ? " Call get_next_step to start a step first."
            : ""),
      { entity: "plan", from: plan.status, to: "awaiting_review" },
    );
  }
  if (plan.pause) {
    throw new AppError(
      "CONFLICT",
      `Plan ${plan.id} is paused on server-run step ${plan.pause.stepOrder}, so no review can be requested now. Nothing was changed. Answer the pause first with the call get_next_step suggests in pauseReason (${plan.pause.suggestedTool}), or modify_plan retry_step on that step, then request the review again.`,
      { pausedStepOrder: plan.pause.stepOrder },
    );
  }
  if (step.status !== "in_progress") {
    throw new AppError(
      "INVALID_TRANSITION",
      `Step ${step.stepOrder} is ${step.status}; only the step in progress can be put up for review. ` +
        (step.status === "pending"
          ? "Call get_next_step to start it first."
          : "Request the review for the step you are working on."),
      { entity: "step", from: step.status, to: "awaiting_input" },
    );
  }
  // Rule 1: a step handed out before a checkpoint was added ahead of it waits
  // for that checkpoint; a review of it could end only in a skip or a reject.
  checkNotHeldByCheckpoint(plan, step, "review");
}
