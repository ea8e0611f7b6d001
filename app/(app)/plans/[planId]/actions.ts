"use server";

import { z } from "zod";
import type { ReviewDecision } from "@/lib/plan-engine/states";
import { cancelPlan, cancelPlanInput } from "@/lib/services/plans/cancel-plan";
import {
  submitUserDecision,
  submitUserDecisionInput,
  type UserDecisionResult,
} from "@/lib/services/plans/submit-user-decision";
import { assignReview, assignReviewInput } from "@/lib/services/reviews/assign-review";
import { planIdField } from "@/lib/services/shared/fields";
import { serverAction } from "@/lib/web/server-action";

const DECIDED: Record<ReviewDecision, string> = {
  approve: "Approved: the step is complete",
  reject: "Rejected: the step failed",
  modify: "Sent back with your feedback: the agent will redo the step",
  skip: "Skipped: the step will not run",
};

/** What the decision did, read from the use case's answer (never assumed from the button). */
function decisionMessage(result: UserDecisionResult): string {
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

/** The review buttons: the same use case, with the same effect and audit rows, as submit_user_decision over MCP. */
export const decideReviewAction = serverAction({
  access: "signed-in",
  input: submitUserDecisionInput,
  run: ({ ctx, input }) => submitUserDecision(ctx, input),
  success: (result) => decisionMessage(result),
  // The inbox answers with the same form, and lists the review too.
  revalidate: (input) => [`/plans/${input.planId}`, "/inbox"],
  revalidateAfterFailure: true,
});

/**
 * The review panel's assignment form: "Assign to me" (`take=me`), or the
 * select's `handTo` (a team member's user id, or "team" to hand it back).
 */
const assignReviewForm = z.object({
  planId: planIdField,
  reviewRequestId: assignReviewInput.shape.reviewRequestId,
  take: z.literal("me").optional(),
  handTo: z.union([z.literal("team"), z.uuid("must be a user id (a UUID)")]).optional(),
});

/** Take a review, or hand it off to a team member or back to the team. */
export const assignReviewAction = serverAction({
  access: "signed-in",
  input: assignReviewForm,
  formOnly: ["handoff"],
  refuse: (form) =>
    form.get("take") !== "me" && !form.get("handTo")
      ? "Choose who should answer the review."
      : undefined,
  run: ({ ctx, user, input }) =>
    assignReview(ctx, {
      reviewRequestId: input.reviewRequestId,
      userId:
        input.take === "me" ? user.userId : input.handTo === "team" ? null : (input.handTo ?? null),
    }),
  success: (assigned, _, user) =>
    assigned.assignedUserId === null
      ? "Handed back to the team: anyone may answer it."
      : assigned.assignedUserId === user.userId
        ? "Assigned to you."
        : `Handed off to ${assigned.assignedUserEmail}.`,
  revalidate: (input) => [`/plans/${input.planId}`, "/inbox"],
  revalidateAfterFailure: true,
});

/**
 * The Cancel button of the plan page, the plan list and the Stalled page: the
 * same use case as cancel_plan over MCP, with the person's reason.
 */
export const cancelPlanAction = serverAction({
  access: "signed-in",
  input: cancelPlanInput,
  run: ({ ctx, input }) => cancelPlan(ctx, input),
  success: (result) =>
    `Cancelled${result.withdrawnReviewIds.length > 0 ? ", and its open review withdrawn" : ""}.`,
  revalidate: (input) => [`/plans/${input.planId}`, "/plans", "/admin/stalled", "/inbox"],
  revalidateAfterFailure: true,
});
