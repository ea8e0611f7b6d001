"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { cancelPlanAction } from "@/app/(app)/plans/[planId]/actions";
import { IDLE } from "@/lib/web/action-state";

/**
 * Cancel an unfinished plan, with the reason the trail keeps: a disclosure, so
 * a plan is never cancelled by one stray click.
 */
export function CancelPlanForm({ planId, planName }: { planId: string; planName: string }) {
  const [state, formAction] = useActionState(cancelPlanAction, IDLE);
  return (
    <details className="cancel-plan" data-testid="cancel-plan">
      <summary>Cancel plan…</summary>
      <form action={formAction} className="stack">
        <input type="hidden" name="planId" value={planId} />
        <label>
          Why cancel “{planName}”? Its open review is withdrawn and no step is handed out or
          accepted any more; this cannot be undone.
          <textarea name="reason" required maxLength={2000} rows={2} />
        </label>
        <SubmitButton className="button button-danger-outline">Cancel this plan</SubmitButton>
        <ActionMessage state={state} />
      </form>
    </details>
  );
}
