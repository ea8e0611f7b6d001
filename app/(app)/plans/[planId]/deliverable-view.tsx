import ReactMarkdown from "react-markdown";
import { Time } from "@/app/_components/time";
import type { PlanPage } from "@/lib/services/plan-views";
import { isMarkdown } from "@/lib/web/deliverable";

/** The final deliverable (Markdown rendered without raw HTML; anything else downloadable) and its feedback. */
export function DeliverableView({ page }: { page: PlanPage }) {
  const deliverable = page.deliverable;
  if (!deliverable && page.feedback.length === 0) return null;
  return (
    <section aria-labelledby="deliverable-heading" className="card">
      <h2 id="deliverable-heading">Deliverable</h2>
      {deliverable ? (
        <>
          <p className="muted">
            {deliverable.outputMediaType} · stored <Time iso={deliverable.createdAt} /> ·{" "}
            <a href={`/plans/${page.plan.planId}/deliverable`} download>
              Download
            </a>
          </p>
          {isMarkdown(deliverable.outputMediaType) ? (
            <div className="markdown" data-testid="deliverable">
              <ReactMarkdown skipHtml>{deliverable.content}</ReactMarkdown>
            </div>
          ) : (
            <details>
              <summary>Show the content</summary>
              <pre data-testid="deliverable">{deliverable.content}</pre>
            </details>
          )}
          {deliverable.formattingNotes ? (
            <p className="muted">Formatting notes: {deliverable.formattingNotes}</p>
          ) : null}
        </>
      ) : (
        <p className="muted">No deliverable stored yet.</p>
      )}
      {page.feedback.length > 0 ? (
        <>
          <h3>Feedback</h3>
          <ul className="plain" data-testid="feedback">
            {page.feedback.map((item) => (
              <li key={item.feedbackId}>
                <strong>{item.feedbackType === "initial" ? "Initial" : "Closing"}</strong> ·{" "}
                <span aria-hidden="true">
                  {"★".repeat(item.satisfaction)}
                  {"☆".repeat(5 - item.satisfaction)}
                </span>
                <span className="sr-only">Satisfaction {item.satisfaction} of 5</span> ·{" "}
                <Time iso={item.createdAt} />
                <p className="pre-wrap">{item.summary}</p>
                {item.improvementSuggestions ? (
                  <p className="muted pre-wrap">Suggestions: {item.improvementSuggestions}</p>
                ) : null}
                {item.followUpRequested ? (
                  <p className="strong">Follow-up research requested.</p>
                ) : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
