"use server";

import { revalidatePath } from "next/cache";
import { requireAdmin } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { TIMEOUT_ACTIONS } from "@/lib/plan-engine/review-deadlines";
import { setReviewDefaults } from "@/lib/services/reviews/review-defaults";
import { type ActionState, actionError, field } from "@/lib/web/action-state";

/** The team's default review deadline, in minutes on the form (empty: none). */
export async function setReviewDefaultsAction(
  _state: ActionState,
  form: FormData,
): Promise<ActionState> {
  const admin = await requireAdmin();
  const minutes = (field(form, "deadlineMinutes") ?? "").trim();
  const onTimeout = TIMEOUT_ACTIONS.find((a) => a === field(form, "onTimeout")) ?? null;
  if (minutes !== "" && !/^\d+$/.test(minutes)) {
    return { status: "error", message: "The deadline is a whole number of minutes." };
  }
  try {
    const saved = await setReviewDefaults(await getDb(), admin.tenantId, {
      deadlineSeconds: minutes === "" ? null : Number(minutes) * 60,
      onTimeout,
    });
    revalidatePath("/admin");
    return {
      status: "success",
      message:
        saved.deadlineSeconds === null
          ? "Saved: reviews without their own deadline wait until someone answers."
          : `Saved: reviews without their own deadline get ${minutes} min, then Cairn will ${saved.onTimeout}.`,
    };
  } catch (error) {
    return actionError(error);
  }
}
