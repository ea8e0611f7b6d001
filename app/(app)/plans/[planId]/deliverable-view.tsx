import ReactMarkdown, { type Components, defaultUrlTransform } from "react-markdown";
import remarkGfm from "remark-gfm";
import { CitationCheckView } from "@/app/_components/evidence-view";
import { Time } from "@/app/_components/time";
import type { PlanPage } from "@/lib/services/views/plan-page";
import { isAllowedImageSource, rendersAsMarkdown } from "@/lib/web/deliverable";

/**
 * Images of the deliverable's Markdown: shown from Cairn itself or data: URLs only.
 * Any other source is named, not loaded, so opening the plan page calls no other host.
 */
function markdownComponents(origin: string | null): Components {
  return {
    img({ src, alt }) {
      if (isAllowedImageSource(src, origin)) {
        // biome-ignore lint/performance/noImgElement: Markdown content, not an optimisable asset
        return <img src={src as string} alt={alt ?? ""} />;
      }
      return (
        <span className="muted" data-testid="blocked-image">
          [Image not shown: it is hosted elsewhere{alt ? ` (${alt})` : ""}]
        </span>
      );
    },
  };
}

/** react-markdown's own URL filter, but data: images survive to be checked above. */
function keepDataImages(url: string, key: string): string {
  if (key === "src" && /^data:image\//i.test(url.trim())) return url;
  return defaultUrlTransform(url);
}

/**
 * The final deliverable (Markdown rendered without raw HTML; anything else
 * downloadable) and its feedback. Only its beginning is read (getPlanPage: up
 * to 500,000 characters would put the page over a megabyte); the download has
 * it whole.
 */
export function DeliverableView({ page, origin }: { page: PlanPage; origin: string | null }) {
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
          {deliverable.shortened.includes("content") ? (
            <p className="notice" data-testid="deliverable-shortened">
              This is the deliverable&apos;s beginning, its first{" "}
              {deliverable.content.length.toLocaleString("en-US")} characters.{" "}
              <a href={`/plans/${page.plan.planId}/deliverable`} download>
                Download it all
              </a>
            </p>
          ) : null}
          {rendersAsMarkdown(deliverable.outputMediaType) ? (
            <div className="markdown" data-testid="deliverable">
              <ReactMarkdown
                skipHtml
                // GitHub's tables, task lists and strikethrough: Cairn's output
                // skill asks agents for key figures in a Markdown table.
                remarkPlugins={[remarkGfm]}
                components={markdownComponents(origin)}
                urlTransform={keepDataImages}
              >
                {deliverable.content}
              </ReactMarkdown>
            </div>
          ) : (
            <details>
              <summary>Show the content</summary>
              <pre data-testid="deliverable">{deliverable.content}</pre>
            </details>
          )}
          {deliverable.citationCheck ? (
            <CitationCheckView check={deliverable.citationCheck} />
          ) : null}
          {deliverable.formattingNotes ? (
            <p className="muted">
              Formatting notes: {deliverable.formattingNotes}
              {deliverable.shortened.includes("formattingNotes") ? "…" : ""}
            </p>
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
                <p className="pre-wrap">
                  {item.summary.text}
                  {item.summary.shortened ? "…" : ""}
                </p>
                {item.improvementSuggestions ? (
                  <p className="muted pre-wrap">
                    Suggestions: {item.improvementSuggestions.text}
                    {item.improvementSuggestions.shortened ? "…" : ""}
                  </p>
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
