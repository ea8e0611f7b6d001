import type { Shortened } from "@/lib/services/views/full-values";
import { fullValueHref, ShortenedText } from "../shortened-text";

/**
 * What the person decides on, first on the plan page and in the inbox: the
 * agent's summary, the result it proposes (what an approve completes the step
 * with), its questions and the step's instructions. Its digest goes with the
 * decision (ReviewDecisionForm), so a decision is bound to exactly this. Long
 * texts come shortened, each with a link to the whole.
 */
export type ReviewContentData = {
  planId: string;
  reviewRequestId: string;
  summary: Shortened;
  questions: string[];
  /** The proposed result as indented JSON; null when the agent proposed none. */
  proposal: Shortened | null;
  /** With no proposal, the step's outputSchema: the person enters the result (ReviewDecisionForm). */
  resultSchema: Shortened | null;
  proposedConfidence: number | null;
  stepInstructions: Shortened;
  /** The step's instructions changed after the review was requested. */
  instructionsChanged: boolean;
};

export function ReviewContent({ review }: { review: ReviewContentData }) {
  const href = (part: "summary" | "proposal" | "instructions") =>
    fullValueHref(review.planId, { review: review.reviewRequestId, part });
  return (
    <div className="review-summary">
      <h3>The agent's summary</h3>
      <ShortenedText value={review.summary} href={href("summary")} testId="review-summary" />
      <h3>What approving accepts</h3>
      {review.proposal ? (
        <div data-testid="review-proposal">
          <ShortenedText
            value={review.proposal}
            href={href("proposal")}
            testId="review-proposal-json"
            json
          />
          <p className="muted">
            {review.proposedConfidence === null
              ? "No confidence given."
              : `The agent's confidence: ${review.proposedConfidence}.`}{" "}
            Approve completes the step with this result, and its branching conditions are evaluated
            on it.
          </p>
        </div>
      ) : review.resultSchema ? (
        <p className="muted" data-testid="review-proposal">
          The agent proposed no result, and the step's output schema needs one: to approve, enter
          the result in the Result field of Cairn's review page or inbox. Approve completes the step
          with it, and its branching conditions are evaluated on it.
        </p>
      ) : (
        <p className="muted" data-testid="review-proposal">
          The agent proposed no result: Approve completes the step with a record of your decision
          and feedback, and no condition fires on a value nobody reported.
        </p>
      )}
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
      <details>
        <summary>The step's instructions</summary>
        <ShortenedText
          value={review.stepInstructions}
          href={href("instructions")}
          testId="review-instructions"
        />
      </details>
      {review.instructionsChanged ? (
        <p className="notice notice-warning" role="status" data-testid="review-changed">
          The step's instructions changed after this review was requested. You decide on what is
          shown here now; a decision relayed for the earlier version is refused.
        </p>
      ) : null}
    </div>
  );
}
