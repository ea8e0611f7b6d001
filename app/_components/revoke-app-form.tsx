"use client";

import { useActionState } from "react";
import type { ActionState } from "@/lib/web/action-state";
import { IDLE } from "@/lib/web/action-state";
import { ActionMessage } from "./action-message";
import { SubmitButton } from "./submit-button";

export function RevokeAppForm({
  grantId,
  name,
  action,
}: {
  grantId: string;
  name: string;
  action: (state: ActionState, form: FormData) => Promise<ActionState>;
}) {
  const [state, formAction] = useActionState(action, IDLE);
  return (
    <form action={formAction} className="inline-form">
      <input type="hidden" name="grantId" value={grantId} />
      <SubmitButton className="button button-danger-outline">
        Revoke<span className="sr-only"> app {name}</span>
      </SubmitButton>
      <ActionMessage state={state} />
    </form>
  );
}
