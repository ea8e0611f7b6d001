"use client";

import { type ReactNode, useId, useState, useTransition } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import type { ReviewDecision } from "@/lib/plan-engine/states";
import type { Shortened } from "@/lib/services/views/full-values";
import type { ActionState } from "@/lib/web/action-state";
import { fullValueHref, ShortenedText } from "../shortened-text";

/** The review a decision answers, as it was shown: its plan, its id and the digest of what it showed. */
type ShownReview = {
  planId: string;
  reviewRequestId: string;
  contentDigest: string;
  /** Set when the person enters the step's result (no proposal, an outputSchema): the form's result field. */
  stepId?: string;
  resultSchema?: Shortened | null;
};

/** A decision as the buttons make it; feedback only when some was written. */
export type DecisionChoice = ShownReview & { decision: ReviewDecision; feedback?: string };

type DecisionFormProps = {
  review: ShownReview;
  state: ActionState;
} & (
  | { action: (form: FormData) => void; onDecide?: never }
  | {
      /**
       * The buttons hand the decision over themselves rather than submitting
       * the form: an MCP App card runs in a sandboxed frame that a host may not
       * allow to submit forms (no `allow-forms`), where a submit never reaches React.
       */
      onDecide: (choice: DecisionChoice) => void;
      action?: never;
    }
);

/**
 * Approve, modify (with feedback), skip or reject (after a confirmation), as the
 * plan page's panel, each inbox entry and the review card offer it. The caller
 * owns the action's state, so its answer stays on screen after the answered
 * review is gone. The form names the review and the digest of what it showed,
 * so a decision made on a page that has since gone stale is refused, not
 * applied to something else. It is keyed to that review as shown: a review
 * decided elsewhere and asked again, or changed while pending, gets a fresh
 * form (no feedback, no armed reject).
 */
export function ReviewDecisionForm(props: DecisionFormProps) {
  const { reviewRequestId, contentDigest } = props.review;
  return <DecisionForm key={`${reviewRequestId}:${contentDigest}`} {...props} />;
}

function DecisionForm({ review, state, action, onDecide }: DecisionFormProps) {
  const { planId, reviewRequestId, contentDigest } = review;
  // Only the posted form carries a result: it is checked on the server, where
  // a refusal names the fields the schema wants.
  const resultSchema = action && review.stepId ? review.resultSchema : null;
  const resultId = useId();
  // Controlled, so a result the server refused stays on screen to correct.
  const [result, setResult] = useState("");
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
  const decide = (value: ReviewDecision, className: string, children: ReactNode) =>
    onDecide ? (
      <button
        type="button"
        className={className}
        disabled={clicked}
        aria-disabled={clicked}
        onClick={() => {
          if (needsFeedback(value)) return;
          startClicked(() =>
            onDecide({
              planId,
              reviewRequestId,
              contentDigest,
              decision: value,
              ...(feedback.trim() ? { feedback } : {}),
            }),
          );
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
      {resultSchema && review.stepId ? (
        <>
          <label htmlFor={resultId}>
            Result{" "}
            <span className="muted">
              (JSON, required to approve: the step completes with it, and its output schema must
              accept it)
            </span>
          </label>
          <textarea
            id={resultId}
            name="result"
            rows={6}
            spellCheck={false}
            value={result}
            onChange={(event) => setResult(event.target.value)}
            data-testid="review-result"
            placeholder='{"verdict": "..."}'
          />
          <details data-testid="review-result-schema">
            <summary>The step's output schema</summary>
            <ShortenedText
              value={resultSchema}
              href={fullValueHref(planId, { step: review.stepId, part: "outputSchema" })}
              testId="review-result-schema-json"
              json
            />
          </details>
        </>
      ) : null}
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
