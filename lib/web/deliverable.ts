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

/** The download's file name: the plan's name in safe characters (at most 80), and the format's extension. */
export function downloadFileName(planName: string, mediaType: string): string {
  const base = planName.replace(/[^\w.-]+/g, "-").slice(0, 80) || "deliverable";
  return `${base}.${downloadFormat(mediaType).extension}`;
}

const RELATIVE_BASE = "http://relative.cairn.invalid/";

/**
 * Whether a deliverable's Markdown image may be shown: a data: image, or an
 * address on the page's own origin (a relative path, or absolute with the same
 * origin). Anything else would make a reader's browser call another host when
 * the plan page opens (a tracking beacon); the Content-Security-Policy blocks
 * that too, and the renderer does not even emit it.
 */
export function isAllowedImageSource(src: unknown, pageOrigin: string | null): boolean {
  if (typeof src !== "string") return false;
  const trimmed = src.trim();
  if (trimmed === "") return false;
  if (/^data:image\//i.test(trimmed)) return true;
  let url: URL;
  try {
    url = new URL(trimmed, RELATIVE_BASE);
  } catch {
    return false;
  }
  if (url.origin === new URL(RELATIVE_BASE).origin) return true;
  return pageOrigin !== null && url.origin === pageOrigin;
}
