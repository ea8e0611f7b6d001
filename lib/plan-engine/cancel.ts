/**
 * Cancelling a plan, decided in the engine: an agent, the plan's researcher or
 * an admin ends an unfinished plan with a reason (docs/state-machines.md,
 * "Cancel"). The plan moves to `cancelled`, which no call leaves; its pending
 * reviews are withdrawn, the leases of its steps in progress end, its wait on
 * a fired add_steps and its pause end, and the trail says who and why. The
 * steps keep their statuses, so the trail and the plan page show where the
 * work stood.
 */
import { AppError } from "./app-error";
import { type AuditEntry, reviewWithdrawnEntry } from "./audit-entries";
import type { PlanStatus, StepStatus } from "./states";
import { transitionPlan } from "./transitions";

/** Stored on the plan: who cancelled it, when and why; every later answer repeats it. */
export type Cancellation = { by: string; reason: string; at: string };

export type CancelDecision = {
  planStatus: PlanStatus;
  cancellation: Cancellation;
  withdrawnReviewIds: string[];
  /** Steps in progress whose lease ends: no holder may submit to a cancelled plan. */
  releasedStepIds: string[];
  audit: AuditEntry[];
};

export function decideCancel(
  plan: {
    id: string;
    status: PlanStatus;
    steps: readonly { id: string; status: StepStatus }[];
    pendingReviews: readonly { id: string; stepId: string }[];
  },
  event: { reason: string; by: string; at: Date },
): CancelDecision {
  if (plan.status === "completed" || plan.status === "failed" || plan.status === "cancelled") {
    throw new AppError(
      "PLAN_NOT_MODIFIABLE",
      `Plan ${plan.id} is ${plan.status}; only an unfinished plan can be cancelled.` +
        (plan.status === "completed"
          ? " A completed plan with a failed step can be re-opened with modify_plan retry_step instead."
          : ""),
      { planStatus: plan.status },
    );
  }
  const planStatus = transitionPlan(plan.status, "cancelled");
  const cancellation: Cancellation = {
    by: event.by,
    reason: event.reason,
    at: event.at.toISOString(),
  };
  const audit: AuditEntry[] = plan.pendingReviews.map((review) =>
    reviewWithdrawnEntry(
      plan.id,
      review,
      `The plan was cancelled before anyone answered: ${event.reason}`,
    ),
  );
  audit.push({
    eventType: "plan_modified",
    planId: plan.id,
    payload: { action: "cancelled", reason: event.reason, previousStatus: plan.status },
  });
  return {
    planStatus,
    cancellation,
    withdrawnReviewIds: plan.pendingReviews.map((review) => review.id),
    releasedStepIds: plan.steps.filter((s) => s.status === "in_progress").map((s) => s.id),
    audit,
  };
}

/** What every call on a cancelled plan says: that it was cancelled, by whom and why. */
export function cancelledPlanMessage(planId: string, cancellation: Cancellation | null): string {
  return cancellation
    ? `Plan ${planId} was cancelled by ${cancellation.by} at ${cancellation.at}: ${sentence(cancellation.reason)}`
    : `Plan ${planId} was cancelled.`;
}

/** A person's reason as a sentence: its own full stop (or ? or !) kept, one added otherwise. */
function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
