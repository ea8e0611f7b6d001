import type { ReviewDecision } from "@/lib/plan-engine/states";
import type { UserDecisionResult } from "@/lib/services/plans/submit-user-decision";

const DECIDED: Record<ReviewDecision, string> = {
  approve: "Approved: the step is complete",
  reject: "Rejected: the step failed",
  modify: "Sent back with your feedback: the agent will redo the step",
  skip: "Skipped: the step will not run",
};

/** What the decision did, read from the use case's answer (never assumed from the button). */
export function decisionMessage(result: UserDecisionResult): string {
  const done = DECIDED[result.decision];
  if (result.planStatus === "failed") {
    return result.decision === "reject"
      ? `${done}, and so has the plan.`
      : `${done}, and a branching condition failed the plan.`;
  }
  if (result.planStatus === "completed")
    return `${done}. That was the last open step: the plan is complete.`;
  if (result.decision === "modify") return `${done}.`;
  const skipped = result.firedConditions.flatMap((f) => f.skippedStepIds ?? []).length;
  return `${done}${skipped > 0 ? `; a branching condition skipped ${skipped} step${skipped === 1 ? "" : "s"}` : ""}. The plan continues.`;
}
