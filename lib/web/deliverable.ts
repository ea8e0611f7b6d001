/**
 * How a stored deliverable is shown and downloaded. Its media type is whatever
 * the agent wrote: the output skill's text forms (markdown_report,
 * executive_summary, comparison_table, slide_outline, email, chat_answer) are
 * all Markdown, so every text is rendered as Markdown (without raw HTML), and
 * only a data format (JSON, CSV, XML, YAML) is shown as it is. A download is
 * always an attachment with a type a browser will not execute.
 */
export function isDataFormat(mediaType: string): boolean {
  return /json|csv|xml|yaml|yml/i.test(mediaType);
}

export function rendersAsMarkdown(mediaType: string): boolean {
  return !isDataFormat(mediaType);
}

export function downloadFormat(mediaType: string): { contentType: string; extension: string } {
  if (/json/i.test(mediaType))
    return { contentType: "application/json; charset=utf-8", extension: "json" };
  if (/csv/i.test(mediaType)) return { contentType: "text/csv; charset=utf-8", extension: "csv" };
  if (isDataFormat(mediaType))
    return { contentType: "text/plain; charset=utf-8", extension: "txt" };
  return { contentType: "text/markdown; charset=utf-8", extension: "md" };
}

/**
 * The download's file name: the plan's name in safe characters (at most 80,
 * no dash left at either end, as `[Inspector] Heat pumps` would leave), and
 * the format's extension.
 */
export function downloadFileName(planName: string, mediaType: string): string {
  const safe = planName.replace(/[^\w.-]+/g, "-").slice(0, 80);
  let start = 0;
  let end = safe.length;
  while (start < end && safe[start] === "-") start++;
  while (end > start && safe[end - 1] === "-") end--;
  const base = safe.slice(start, end) || "deliverable";
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
