"use server";

import { redirect } from "next/navigation";
import { AuthError } from "next-auth";
import { signIn } from "@/lib/auth/config";
import {
  changeOwnPassword,
  changePasswordInput,
} from "@/lib/services/accounts/change-own-password";
import {
  revokeConnectedApp,
  revokeConnectedAppInput,
} from "@/lib/services/accounts/connected-apps";
import {
  emailNotificationsInput,
  setEmailNotifications,
} from "@/lib/services/accounts/email-preferences";
import { field } from "@/lib/web/action-state";
import { requestClientAddress } from "@/lib/web/request";
import { serverAction } from "@/lib/web/server-action";

/**
 * Changes the signed-in user's password. Every session of theirs ends (the
 * session version rises), so this one is signed in again with the new password;
 * by default their connected apps and API keys end too, and the page says what ended.
 */
export const changePasswordAction = serverAction({
  access: "signed-in",
  input: changePasswordInput,
  formOnly: ["confirmPassword", "username"],
  refuse: (form) =>
    field(form, "newPassword") !== field(form, "confirmPassword")
      ? "The new password and its confirmation differ."
      : undefined,
  run: async ({ ctx, input }) =>
    changeOwnPassword(ctx, input, { address: await requestClientAddress() }),
  // A redirect, not an answer: the page is then rendered with the new session's
  // cookie (re-rendering it in this request would still see the old token, which
  // the change has just ended).
  success: async (changed, input, user) => {
    try {
      await signIn("credentials", {
        email: user.email,
        password: input.newPassword,
        redirect: false,
      });
    } catch (error) {
      if (!(error instanceof AuthError)) throw error;
      redirect("/sign-in");
    }
    const ended = new URLSearchParams({
      changed: changed.everywhere ? "everywhere" : "sessions",
      apps: String(changed.appsRevoked),
      keys: String(changed.apiKeysRevoked),
    });
    redirect(`/account?${ended}`);
  },
});

/** The signed-in person's own switch for review e-mails. */
export const emailNotificationsAction = serverAction({
  access: "signed-in",
  input: emailNotificationsInput,
  run: ({ ctx, input }) => setEmailNotifications(ctx, input),
  success: (_, input) =>
    input.emails === "on" ? "Review e-mails are on." : "Review e-mails are off.",
  revalidate: () => "/account",
});

/** Revokes one of the signed-in user's own connected apps: its tokens stop at once. */
export const revokeOwnAppAction = serverAction({
  access: "signed-in",
  input: revokeConnectedAppInput,
  run: ({ ctx, input }) => revokeConnectedApp(ctx, input, { own: true }),
  success: () => "App revoked: its tokens no longer work.",
  revalidate: () => "/account",
});
