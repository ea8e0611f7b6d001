"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { AuthError } from "next-auth";
import { signIn } from "@/auth";
import { requireUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { changeOwnPassword } from "@/lib/services/accounts";
import { revokeConnectedApp } from "@/lib/services/connected-apps";
import { type ActionState, actionError, field } from "@/lib/web/action-state";
import { requestClientAddress } from "@/lib/web/request";

/**
 * Changes the signed-in user's password. Every session of theirs ends (the
 * session version rises), so this one is signed in again with the new password.
 */
export async function changePasswordAction(
  _state: ActionState,
  form: FormData,
): Promise<ActionState> {
  const user = await requireUser();
  const newPassword = field(form, "newPassword") ?? "";
  if (newPassword !== field(form, "confirmPassword")) {
    return { status: "error", message: "The new password and its confirmation differ." };
  }
  try {
    await changeOwnPassword(
      await getDb(),
      user,
      { currentPassword: field(form, "currentPassword") ?? "", newPassword },
      { address: await requestClientAddress() },
    );
  } catch (error) {
    return actionError(error);
  }
  // A redirect, not an answer: the page is then rendered with the new session's
  // cookie (re-rendering it in this request would still see the old token, which
  // the change has just ended).
  try {
    await signIn("credentials", { email: user.email, password: newPassword, redirect: false });
  } catch (error) {
    if (!(error instanceof AuthError)) throw error;
    redirect("/sign-in");
  }
  redirect("/account?changed=1");
}

/** Revokes one of the signed-in user's own connected apps: its tokens stop at once. */
export async function revokeOwnAppAction(
  _state: ActionState,
  form: FormData,
): Promise<ActionState> {
  const user = await requireUser();
  try {
    await revokeConnectedApp(
      await getDb(),
      user.tenantId,
      field(form, "grantId") ?? "",
      user.userId,
    );
  } catch (error) {
    return actionError(error);
  }
  revalidatePath("/account");
  return { status: "success", message: "App revoked: its tokens no longer work." };
}
