"use client";

import { useActionState, useState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { IDLE } from "@/lib/web/action-state";
import { decideReviewAction } from "./actions";

export type PendingReview = {
  reviewRequestId: string;
  stepOrder: number | null;
  summary: string;
  questions: string[];
  requestedBy: string;
  requestedAt: string;
};

/**
 * The checkpoint. Stays mounted while the page refreshes itself, so the
 * reviewer's typing survives, and the answer to their decision (including "the
 * plan changed under you") stays on screen after the pending review is gone.
 */
export function ReviewArea({
  planId,
  planStatus,
  review,
}: {
  planId: string;
  planStatus: string;
  review: PendingReview | null;
}) {
  const [state, action] = useActionState(decideReviewAction, IDLE);
  const [confirmReject, setConfirmReject] = useState(false);
  const [feedback, setFeedback] = useState("");
  const [feedbackError, setFeedbackError] = useState<string | null>(null);

  if (!review) {
    if (state.status === "idle") return null;
    return (
      <section className="card review" aria-labelledby="review-heading">
        <h2 id="review-heading">Review</h2>
        <ActionMessage state={state} />
        <p data-testid="current-state">
          The plan is now <strong>{planStatus.replace("_", " ")}</strong>.
        </p>
      </section>
    );
  }

  return (
    <section
      className="card review review-pending"
      aria-labelledby="review-heading"
      data-testid="review-panel"
    >
      <h2 id="review-heading">
        Your review is needed{review.stepOrder ? ` on step ${review.stepOrder}` : ""}
      </h2>
      <p className="muted">
        Asked by {review.requestedBy} at{" "}
        <time dateTime={review.requestedAt}>
          {review.requestedAt.slice(0, 16).replace("T", " ")} UTC
        </time>
      </p>
      <div className="review-summary">
        <h3>The agent's summary</h3>
        <p className="pre-wrap" data-testid="review-summary">
          {review.summary}
        </p>
        {review.questions.length > 0 ? (
          <>
            <h3>Questions</h3>
            <ul>
              {review.questions.map((question) => (
                <li key={question}>{question}</li>
              ))}
            </ul>
          </>
        ) : null}
      </div>
      <form
        action={action}
        className="form"
        onSubmit={(event) => {
          const submitter = (event.nativeEvent as SubmitEvent)
            .submitter as HTMLButtonElement | null;
          if (submitter?.value === "modify" && feedback.trim() === "") {
            event.preventDefault();
            setFeedbackError("Write the feedback the agent should follow before choosing Modify.");
          }
        }}
      >
        <input type="hidden" name="planId" value={planId} />
        <input type="hidden" name="reviewRequestId" value={review.reviewRequestId} />
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
            aria-describedby={feedbackError ? "feedback-error" : undefined}
          />
        </label>
        {feedbackError ? (
          <p id="feedback-error" role="alert" className="notice notice-error">
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
    </section>
  );
}
