import type { FullValueQuery, Shortened } from "@/lib/services/views/full-values";

/** The address of one long value in full (app/(app)/plans/[planId]/full). */
export function fullValueHref(planId: string, query: FullValueQuery): string {
  return `/plans/${planId}/full?${new URLSearchParams(query).toString()}`;
}

const sizeText = (bytes: number) =>
  bytes < 1024 ? `${bytes} bytes` : `${Math.round(bytes / 1024).toLocaleString("en-US")} KB`;

/**
 * A long value as the pages show it: its beginning, and when it was shortened a
 * "Show all" link to the whole (opened on its own, so the page that refreshes
 * every few seconds never carries it). `json` shows it as code.
 */
export function ShortenedText({
  value,
  href,
  testId,
  json = false,
}: {
  value: Shortened;
  href: string;
  testId: string;
  json?: boolean;
}) {
  const text = value.shortened ? `${value.text}…` : value.text;
  return (
    <>
      {json ? (
        <pre data-testid={testId}>{text}</pre>
      ) : (
        <p className="pre-wrap" data-testid={testId}>
          {text}
        </p>
      )}
      {value.shortened ? (
        <p className="muted">
          Shortened here.{" "}
          <a href={href} target="_blank" rel="noopener" data-testid={`${testId}-all`}>
            Show all ({sizeText(value.bytes)})
          </a>
        </p>
      ) : null}
    </>
  );
}
