"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { IDLE } from "@/lib/web/action-state";
import { recoverStepAction } from "./actions";

export function RecoverForm({
  planId,
  stepId,
  action,
  label,
}: {
  planId: string;
  stepId: string;
  action: "fail_step" | "retry_step";
  label: string;
}) {
  const [state, formAction] = useActionState(recoverStepAction, IDLE);
  return (
    <form action={formAction} className="inline-form">
      <input type="hidden" name="planId" value={planId} />
      <input type="hidden" name="stepId" value={stepId} />
      <input type="hidden" name="action" value={action} />
      <SubmitButton className={action === "fail_step" ? "button button-danger-outline" : "button"}>
        {label}
      </SubmitButton>
      <ActionMessage state={state} />
    </form>
  );
}
