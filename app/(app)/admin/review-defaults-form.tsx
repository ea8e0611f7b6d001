"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { IDLE } from "@/lib/web/action-state";
import { setReviewDefaultsAction } from "./review-defaults-actions";

/** The team's default deadline for reviews whose agent names none (docs/reviews.md). */
export function ReviewDefaultsForm({
  deadlineSeconds,
  onTimeout,
}: {
  deadlineSeconds: number | null;
  onTimeout: string | null;
}) {
  const [state, action] = useActionState(setReviewDefaultsAction, IDLE);
  return (
    <form action={action} className="form" data-testid="review-defaults">
      <label>
        Deadline in minutes <span className="muted">(empty: reviews wait until answered)</span>
        <input
          name="deadlineMinutes"
          inputMode="numeric"
          defaultValue={deadlineSeconds === null ? "" : String(Math.round(deadlineSeconds / 60))}
        />
      </label>
      <label>
        When it passes
        <select name="onTimeout" defaultValue={onTimeout ?? ""}>
          <option value="">Nothing (no deadline)</option>
          <option value="approve">Approve the step</option>
          <option value="reject">Reject the step (the plan fails)</option>
          <option value="skip">Skip the step</option>
          <option value="escalate">Hand the review to the admins</option>
        </select>
      </label>
      <ActionMessage state={state} />
      <SubmitButton className="button button-primary">Save review defaults</SubmitButton>
    </form>
  );
}
