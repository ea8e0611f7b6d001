"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { type ActionState, IDLE } from "@/lib/web/action-state";
import { changePasswordAction } from "./actions";

export function ChangePasswordForm({ email, changed }: { email: string; changed: boolean }) {
  const [state, action] = useActionState<ActionState, FormData>(
    changePasswordAction,
    changed
      ? { status: "success", message: "Password changed. Your other sessions are signed out." }
      : IDLE,
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
      <ActionMessage state={state} />
      <SubmitButton>Change password</SubmitButton>
    </form>
  );
}
