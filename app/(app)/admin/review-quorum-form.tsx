"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { MAX_APPROVALS_REQUIRED } from "@/lib/plan-engine/states";
import { IDLE } from "@/lib/web/action-state";
import { setReviewQuorumAction } from "./review-quorum-actions";

/** How many distinct people must approve each review (docs/reviews.md, "Quorum"). */
export function ReviewQuorumForm({ approvalsRequired }: { approvalsRequired: number }) {
  const [state, action] = useActionState(setReviewQuorumAction, IDLE);
  return (
    <form action={action} className="form" data-testid="review-quorum">
      <label>
        Approvals a review needs{" "}
        <span className="muted">(distinct people, 1 to {MAX_APPROVALS_REQUIRED})</span>
        <input
          name="approvalsRequired"
          inputMode="numeric"
          defaultValue={String(approvalsRequired)}
        />
      </label>
      <ActionMessage state={state} />
      <SubmitButton className="button button-primary">Save approvals</SubmitButton>
    </form>
  );
}
