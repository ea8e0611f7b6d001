"use client";

import { useActionState, useEffect, useState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { type ActionState, IDLE } from "@/lib/web/action-state";
import { signInAction } from "./actions";

export function SignInForm({ callbackUrl, refused }: { callbackUrl?: string; refused?: string }) {
  const [state, action] = useActionState<ActionState, FormData>(
    signInAction,
    refused ? { status: "error", message: refused } : IDLE,
  );
  // The page's anchor (a link to `/plans/<id>#review`) reaches only the browser.
  const [hash, setHash] = useState("");
  useEffect(() => setHash(window.location.hash), []);
  return (
    <form action={action} className="form card">
      <input type="hidden" name="callbackUrl" value={callbackUrl ?? ""} />
      <input type="hidden" name="callbackHash" value={hash} />
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
