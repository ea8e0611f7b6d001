"use client";

import { useId, useState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import type { ActionState } from "@/lib/web/action-state";

/**
 * The key a decision form is rendered under: one review as it was shown. A
 * review decided elsewhere and asked again, or changed while pending, is
 * another key, so React gives it a fresh form (no feedback, no armed reject).
 */
export function reviewFormKey(review: { reviewRequestId: string; contentDigest: string }): string {
  return `${review.reviewRequestId}:${review.contentDigest}`;
}

/**
 * Approve, modify (with feedback), skip or reject (after a confirmation), as the
 * plan page's panel and each inbox entry offer it. The caller owns the action's
 * state, so its answer stays on screen after the answered review is gone. The
 * form names the review and the digest of what it showed, so a decision made on
 * a page that has since gone stale is refused, not applied to something else;
 * render it under `reviewFormKey` so its typing and armed reject belong to
 * that review alone.
 */
export function ReviewDecisionForm({
  planId,
  reviewRequestId,
  contentDigest,
  action,
  state,
}: {
  planId: string;
  reviewRequestId: string;
  contentDigest: string;
  action: (form: FormData) => void;
  state: ActionState;
}) {
  const [confirmReject, setConfirmReject] = useState(false);
  const [feedback, setFeedback] = useState("");
  const [feedbackError, setFeedbackError] = useState<string | null>(null);
  const errorId = useId();

  return (
    <form
      action={action}
      className="form"
      onSubmit={(event) => {
        const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
        if (submitter?.value === "modify" && feedback.trim() === "") {
          event.preventDefault();
          setFeedbackError("Write the feedback the agent should follow before choosing Modify.");
        }
      }}
    >
      <input type="hidden" name="planId" value={planId} />
      <input type="hidden" name="reviewRequestId" value={reviewRequestId} />
      <input type="hidden" name="contentDigest" value={contentDigest} />
      <label>
        Feedback <span className="muted">(required for Modify, kept with any decision)</span>
        <textarea
          name="feedback"
          rows={4}
          value={feedback}
          onChange={(event) => {
            setFeedback(event.target.value);
            setFeedbackError(null);
          }}
          aria-invalid={feedbackError !== null}
          aria-describedby={feedbackError ? errorId : undefined}
        />
      </label>
      {feedbackError ? (
        <p id={errorId} role="alert" className="notice notice-error">
          {feedbackError}
        </p>
      ) : null}
      <ActionMessage state={state} />
      <div className="actions">
        <SubmitButton name="decision" value="approve" className="button button-primary">
          Approve
        </SubmitButton>
        <SubmitButton name="decision" value="modify" className="button">
          Modify with feedback
        </SubmitButton>
        <SubmitButton name="decision" value="skip" className="button">
          Skip step
        </SubmitButton>
        {confirmReject ? (
          <>
            <SubmitButton name="decision" value="reject" className="button button-danger">
              Confirm reject: fail the plan
            </SubmitButton>
            <button type="button" className="button" onClick={() => setConfirmReject(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button
            type="button"
            className="button button-danger-outline"
            onClick={() => setConfirmReject(true)}
          >
            Reject…
          </button>
        )}
      </div>
    </form>
  );
}
