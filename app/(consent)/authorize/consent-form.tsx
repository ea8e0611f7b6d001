"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { type ActionState, IDLE } from "@/lib/web/action-state";
import { answerConsentAction } from "./actions";

export function ConsentForm({ params }: { params: Record<string, string> }) {
  const [state, action] = useActionState<ActionState, FormData>(answerConsentAction, IDLE);
  return (
    <form action={action} className="inline-form">
      {Object.entries(params).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <SubmitButton name="decision" value="approve">
        Approve
      </SubmitButton>
      <SubmitButton name="decision" value="deny" className="button button-danger-outline">
        Deny
      </SubmitButton>
      <ActionMessage state={state} />
    </form>
  );
}
