/**
 * How a stored deliverable is shown and downloaded. Its media type is whatever
 * the agent wrote ("markdown", "text/markdown", "json", "slides"...): Markdown is
 * rendered (without raw HTML), anything else is offered as a download, always as
 * an attachment with a type a browser will not execute.
 */
export function isMarkdown(mediaType: string): boolean {
  return /markdown|^md$/i.test(mediaType.trim());
}

export function downloadFormat(mediaType: string): { contentType: string; extension: string } {
  if (isMarkdown(mediaType))
    return { contentType: "text/markdown; charset=utf-8", extension: "md" };
  if (/json/i.test(mediaType))
    return { contentType: "application/json; charset=utf-8", extension: "json" };
  if (/csv/i.test(mediaType)) return { contentType: "text/csv; charset=utf-8", extension: "csv" };
  return { contentType: "text/plain; charset=utf-8", extension: "txt" };
}
