"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { type ActionState, IDLE } from "@/lib/web/action-state";
import { signInAction } from "./actions";

export function SignInForm({ callbackUrl, refused }: { callbackUrl?: string; refused?: string }) {
  const [state, action] = useActionState<ActionState, FormData>(
    signInAction,
    refused ? { status: "error", message: refused } : IDLE,
  );
  return (
    <form action={action} className="form card">
      <input type="hidden" name="callbackUrl" value={callbackUrl ?? ""} />
      <label>
        E-mail
        <input name="email" type="email" autoComplete="username" required />
      </label>
      <label>
        Password
        <input name="password" type="password" autoComplete="current-password" required />
      </label>
      <ActionMessage state={state} />
      <SubmitButton>Sign in</SubmitButton>
    </form>
  );
}
