import type { PlanStatus, ReviewDecision } from "@/lib/plan-engine/states";
import type { UserDecisionResult } from "@/lib/services/plans/submit-user-decision";

const DECIDED: Record<ReviewDecision, string> = {
  approve: "Approved: the step is complete",
  reject: "Rejected: the step failed",
  modify: "Sent back with your feedback: the agent will redo the step",
  skip: "Skipped: the step will not run",
};

/** Where a plan the decision left running has gone since. */
const ENDED_SINCE: Partial<Record<PlanStatus, string>> = {
  completed: "The plan has completed since.",
  failed: "The plan has failed since.",
  cancelled: "The plan has been cancelled since.",
};

/**
 * What the decision did, read from the use case's answer (never assumed from
 * the button); a card that follows the plan passes its status now, so a plan
 * that ended after the decision is no longer said to continue.
 */
export function decisionMessage(
  result: UserDecisionResult,
  planStatusNow: PlanStatus = result.planStatus,
): string {
  // An approval toward a quorum: counted, and the review waits for the rest.
  if (result.approvals && result.stepStatus === "awaiting_input") {
    const { count, required } = result.approvals;
    return `Your approval counts: ${count} of ${required}. The review waits for ${required - count} more.`;
  }
  const done = DECIDED[result.decision];
  if (result.planStatus === "failed") {
    return result.decision === "reject"
      ? `${done}, and so has the plan.`
      : `${done}, and a branching condition failed the plan.`;
  }
  if (result.planStatus === "completed")
    return `${done}. That was the last open step: the plan is complete.`;
  const since = ENDED_SINCE[planStatusNow];
  if (result.decision === "modify") return since ? `${done}. ${since}` : `${done}.`;
  const skipped = result.firedConditions.flatMap((f) => f.skippedStepIds ?? []).length;
  return `${done}${skipped > 0 ? `; a branching condition skipped ${skipped} step${skipped === 1 ? "" : "s"}` : ""}. ${since ?? "The plan continues."}`;
}
