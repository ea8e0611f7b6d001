"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { requireAdmin, userContext } from "@/lib/auth/session";
import { modifyPlan } from "@/lib/services/modify-plan";
import { type ActionState, actionError, field } from "@/lib/web/action-state";

/** Fail a stalled step or retry a failed one: modify_plan's recovery actions, by an admin. */
export async function recoverStepAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const admin = await requireAdmin();
  const action = field(form, "action");
  if (action !== "fail_step" && action !== "retry_step") {
    return { status: "error", message: "Choose to fail or to retry the step." };
  }
  const planId = field(form, "planId") ?? "";
  let planStatus: string;
  try {
    const result = await modifyPlan(await userContext(admin), {
      planId,
      action,
      stepId: field(form, "stepId"),
      modificationRationale:
        action === "fail_step"
          ? "Failed by an admin from the stalled plans page."
          : "Retried by an admin from the stalled plans page.",
      reason: action === "fail_step" ? "Stalled: failed by an admin." : undefined,
    });
    planStatus = result.planStatus;
  } catch (error) {
    return actionError(error);
  }
  revalidatePath(`/plans/${planId}`);
  // The plan may leave this list once recovered, taking its form with it, so the
  // confirmation travels in the URL and the page states it.
  redirect(`/admin/stalled?done=${action}&status=${planStatus}`);
}
