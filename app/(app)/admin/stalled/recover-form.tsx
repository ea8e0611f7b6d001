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
  endsPlan = false,
}: {
  planId: string;
  stepId: string;
  action: "fail_step" | "retry_step";
  label: string;
  /** Failing this step leaves nothing open: the plan would complete, so say so and ask first. */
  endsPlan?: boolean;
}) {
  const [state, formAction] = useActionState(recoverStepAction, IDLE);
  return (
    <form action={formAction} className="inline-form">
      <input type="hidden" name="planId" value={planId} />
      <input type="hidden" name="stepId" value={stepId} />
      <input type="hidden" name="action" value={action} />
      {endsPlan ? (
        <label className="warning-text" data-testid="fail-ends-plan">
          <input type="checkbox" name="confirmEndsPlan" required /> This is the plan&apos;s last
          open step: failing it ends the plan (completed, with this step failed; retrying the step
          re-opens it).
        </label>
      ) : null}
      <SubmitButton className={action === "fail_step" ? "button button-danger-outline" : "button"}>
        {label}
      </SubmitButton>
      <ActionMessage state={state} />
    </form>
  );
}
