"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { type ActionState, IDLE } from "@/lib/web/action-state";
import { changePasswordAction } from "./actions";

export function ChangePasswordForm({
  email,
  changedMessage,
}: {
  email: string;
  /** What the last change ended, when the page is shown right after one. */
  changedMessage: string | undefined;
}) {
  const [state, action] = useActionState<ActionState, FormData>(
    changePasswordAction,
    changedMessage ? { status: "success", message: changedMessage } : IDLE,
  );
  return (
    <form action={action} className="form card" aria-labelledby="password-heading">
      <h2 id="password-heading">Change your password</h2>
      {/* For password managers: which account this password belongs to. */}
      <input type="hidden" name="username" autoComplete="username" value={email} />
      <label>
        Current password
        <input name="currentPassword" type="password" autoComplete="current-password" required />
      </label>
      <label>
        New password <span className="muted">(at least 8 characters)</span>
        <input
          name="newPassword"
          type="password"
          autoComplete="new-password"
          minLength={8}
          maxLength={200}
          required
        />
      </label>
      <label>
        Confirm the new password
        <input
          name="confirmPassword"
          type="password"
          autoComplete="new-password"
          minLength={8}
          maxLength={200}
          required
        />
      </label>
      <label className="check">
        <input type="checkbox" name="signOutEverywhere" value="on" defaultChecked />
        Also end my connected apps and API keys (your other sessions end in any case)
      </label>
      <ActionMessage state={state} />
      <SubmitButton>Change password</SubmitButton>
    </form>
  );
}
