"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { IDLE } from "@/lib/web/action-state";
import { createFirstAdminAction } from "./actions";

export function SetupForm() {
  const [state, action] = useActionState(createFirstAdminAction, IDLE);
  return (
    <form action={action} className="form card">
      <label>
        Setup code
        <input
          name="setupCode"
          required
          autoComplete="off"
          spellCheck={false}
          placeholder="XXXX-XXXX-XXXX-XXXX"
          maxLength={40}
        />
      </label>
      <label>
        Team name
        <input name="tenant" required maxLength={200} placeholder="e.g. Research team" />
      </label>
      <label>
        Your name
        <input name="name" autoComplete="name" maxLength={200} />
      </label>
      <label>
        E-mail
        <input name="email" type="email" autoComplete="username" required />
      </label>
      <label>
        Password <span className="muted">(at least 8 characters)</span>
        <input name="password" type="password" autoComplete="new-password" minLength={8} required />
      </label>
      <ActionMessage state={state} />
      <SubmitButton>Create the admin account</SubmitButton>
    </form>
  );
}
