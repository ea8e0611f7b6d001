"use server";

import { revalidatePath } from "next/cache";
import { requireUser, userContext } from "@/lib/auth/session";
import { REVIEW_DECISIONS, type ReviewDecision } from "@/lib/plan-engine/states";
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
  }
  return { status: "success", message: DONE[decision] };
}
