"use server";

import { revalidatePath } from "next/cache";
import { requireUser, userContext } from "@/lib/auth/session";
import { REVIEW_DECISIONS, type ReviewDecision } from "@/lib/plan-engine/states";
import { assignReview } from "@/lib/services/assign-review";
import { submitUserDecision } from "@/lib/services/submit-user-decision";
import { type ActionState, actionError, field } from "@/lib/web/action-state";

const DONE: Record<ReviewDecision, string> = {
  approve: "Approved: the step is complete and the plan continues.",
  reject: "Rejected: the step and the plan have failed.",
  modify: "Sent back with your feedback: the agent will redo the step.",
  skip: "Skipped: the plan continues with the next step.",
};

/** The review buttons: the same use case, with the same effect and audit rows, as submit_user_decision over MCP. */
export async function decideReviewAction(
  _state: ActionState,
  form: FormData,
): Promise<ActionState> {
  const user = await requireUser();
  const planId = field(form, "planId") ?? "";
  const decision = REVIEW_DECISIONS.find((d) => d === field(form, "decision"));
  if (!decision) return { status: "error", message: "Choose approve, reject, modify or skip." };
  try {
    await submitUserDecision(await userContext(user), {
      planId,
      decision,
      reviewRequestId: field(form, "reviewRequestId") || undefined,
      feedback: field(form, "feedback") || undefined,
    });
  } catch (error) {
    return actionError(error);
  } finally {
    revalidatePath(`/plans/${planId}`);
    revalidatePath("/inbox");
  }
  return { status: "success", message: DONE[decision] };
}

/**
 * Take a review (the button "Assign to me"), or hand it off to a team member
 * or back to the team (the select's `handTo`: a user id or "team").
 */
export async function assignReviewAction(
  _state: ActionState,
  form: FormData,
): Promise<ActionState> {
  const user = await requireUser();
  const planId = field(form, "planId") ?? "";
  const handTo = field(form, "take") === "me" ? user.userId : (field(form, "handTo") ?? "");
  if (handTo === "") return { status: "error", message: "Choose who should answer the review." };
  try {
    const assigned = await assignReview(await userContext(user), {
      reviewRequestId: field(form, "reviewRequestId") ?? "",
      userId: handTo === "team" ? null : handTo,
    });
    return {
      status: "success",
      message:
        assigned.assignedUserId === null
          ? "Handed back to the team: anyone may answer it."
          : assigned.assignedUserId === user.userId
            ? "Assigned to you."
            : `Handed off to ${assigned.assignedUserEmail}.`,
    };
  } catch (error) {
    return actionError(error);
  } finally {
    revalidatePath(`/plans/${planId}`);
    revalidatePath("/inbox");
  }
}
