"use server";

import type { ReviewDecision } from "@/lib/plan-engine/states";
import { submitUserDecision, submitUserDecisionInput } from "@/lib/services/submit-user-decision";
import { serverAction } from "@/lib/web/server-action";

const DECISION_CONFIRMATIONS: Record<ReviewDecision, string> = {
  approve: "Approved: the step is complete and the plan continues.",
  reject: "Rejected: the step and the plan have failed.",
  modify: "Sent back with your feedback: the agent will redo the step.",
  skip: "Skipped: the plan continues with the next step.",
};

/** The review buttons: the same use case, with the same effect and audit rows, as submit_user_decision over MCP. */
export const decideReviewAction = serverAction({
  access: "signed-in",
  input: submitUserDecisionInput,
  run: ({ ctx, input }) => submitUserDecision(ctx, input),
  success: (_, input) => DECISION_CONFIRMATIONS[input.decision],
  revalidate: (input) => `/plans/${input.planId}`,
  revalidateAfterFailure: true,
});
