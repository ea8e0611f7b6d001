"use client";

import { type ReactNode, useId, useState, useTransition } from "react";
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
  submitOnClick = false,
}: {
  planId: string;
  reviewRequestId: string;
  contentDigest: string;
  action: (form: FormData) => void;
  state: ActionState;
  /**
   * The buttons call the action themselves rather than submitting the form:
   * an MCP App card runs in a sandboxed frame that a host may not allow to
   * submit forms (no `allow-forms`), where a submit never reaches React.
   */
  submitOnClick?: boolean;
}) {
  const [confirmReject, setConfirmReject] = useState(false);
  const [feedback, setFeedback] = useState("");
  const [feedbackError, setFeedbackError] = useState<string | null>(null);
  const [clicked, startClicked] = useTransition();
  const errorId = useId();
  const needsFeedback = (decision: string) => {
    if (decision !== "modify" || feedback.trim() !== "") return false;
    setFeedbackError("Write the feedback the agent should follow before choosing Modify.");
    return true;
  };
  const decide = (value: string, className: string, children: ReactNode) =>
    submitOnClick ? (
      <button
        type="button"
        className={className}
        disabled={clicked}
        aria-disabled={clicked}
        onClick={() => {
          if (needsFeedback(value)) return;
          const form = new FormData();
          for (const [name, field] of Object.entries({
            planId,
            reviewRequestId,
            contentDigest,
            feedback,
            decision: value,
          })) {
            form.set(name, field);
          }
          startClicked(() => action(form));
        }}
      >
        {children}
      </button>
    ) : (
      <SubmitButton name="decision" value={value} className={className}>
        {children}
      </SubmitButton>
    );

  return (
    <form
      action={action}
      className="form"
      onSubmit={(event) => {
        const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
        if (needsFeedback(submitter?.value ?? "")) event.preventDefault();
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
        {decide("approve", "button button-primary", "Approve")}
        {decide("modify", "button", "Modify with feedback")}
        {decide("skip", "button", "Skip step")}
        {confirmReject ? (
          <>
            {decide("reject", "button button-danger", "Confirm reject: fail the plan")}
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
