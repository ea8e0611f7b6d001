import type { ProposalField, Shortened } from "@/lib/services/views/full-values";
import { fullValueHref, ShortenedText } from "../shortened-text";

/**
 * What the person decides on, first on the plan page and in the inbox: the
 * agent's summary, the result it proposes (what an approve completes the step
 * with), its questions and the step's instructions. Its digest goes with the
 * decision (ReviewDecisionForm), so a decision is bound to exactly this. Long
 * texts come shortened, each with a link to the whole; the proposal field by
 * field in the agent's order, each shortened on its own, so every key shows.
 */
export type ReviewContentData = {
  planId: string;
  reviewRequestId: string;
  summary: Shortened;
  questions: string[];
  /** The proposed result's fields in the agent's order; null when the agent proposed none. */
  proposal: ProposalField[] | null;
  /** The proposal's fields beyond those shown, which only the whole proposal's link shows. */
  proposalNotShown: number;
  /** With no proposal, the step's outputSchema: the person enters the result (ReviewDecisionForm). */
  resultSchema: Shortened | null;
  proposedConfidence: number | null;
  stepInstructions: Shortened;
  /** The step's instructions changed after the review was requested. */
  instructionsChanged: boolean;
};

export function ReviewContent({ review }: { review: ReviewContentData }) {
  const href = (part: "summary" | "instructions") =>
    fullValueHref(review.planId, { review: review.reviewRequestId, part });
  return (
    <div className="review-summary">
      <h3>The agent's summary</h3>
      <ShortenedText value={review.summary} href={href("summary")} testId="review-summary" />
      <h3>What approving accepts</h3>
      {review.proposal ? (
        <div data-testid="review-proposal">
          <dl className="proposal-fields">
            {review.proposal.map((field) => (
              <div key={field.key} data-testid="review-proposal-field">
                <dt>
                  <code>{field.key}</code>
                </dt>
                <dd>
                  <ShortenedText
                    value={field.value}
                    href={fullValueHref(review.planId, {
                      review: review.reviewRequestId,
                      part: "proposal",
                      field: field.key,
                    })}
                    testId="review-proposal-json"
                    json
                  />
                </dd>
              </div>
            ))}
          </dl>
          {review.proposalNotShown > 0 ? (
            <p className="muted" data-testid="review-proposal-more">
              {review.proposalNotShown.toLocaleString("en-US")} more{" "}
              {review.proposalNotShown === 1 ? "field" : "fields"} not shown here.{" "}
              <a
                href={fullValueHref(review.planId, {
                  review: review.reviewRequestId,
                  part: "proposal",
                })}
                target="_blank"
                rel="noopener"
                data-testid="review-proposal-whole"
              >
                Show the whole proposal
              </a>
            </p>
          ) : null}
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
