"use client";

import { type FormEvent, startTransition, useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { IDLE } from "@/lib/web/action-state";
import { createFirstAdminAction } from "./actions";

export function SetupForm() {
  const [state, action, pending] = useActionState(createFirstAdminAction, IDLE);
  // Submitted by hand rather than through the form's action, which resets
  // every field afterwards: a wrong code then costs the person only the code,
  // not the team, name, e-mail and password they typed.
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const code = form.elements.namedItem("setupCode");
    if (code instanceof HTMLInputElement) code.value = "";
    startTransition(() => action(data));
  };
  return (
    <form onSubmit={submit} className="form card">
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
      <button type="submit" className="button" disabled={pending} aria-disabled={pending}>
        Create the admin account
      </button>
    </form>
  );
}
