/**
 * A deliverable's citations checked against its plan's evidence
 * (docs/evidence.md, "The deliverable's citations"): which cited pages, DOIs
 * and arXiv papers the plan read, which it never read, which numbered
 * references lead nowhere, and which key claims go without any of their sources.
 */
import { canonicalSourceKey } from "./source-key";

export interface Citation {
  /** As the deliverable writes it (the first spelling, when it cites one source several ways). */
  readonly written: string;
  readonly key: string;
  readonly href: string;
  readonly status: "plan_source" | "not_read";
}

export interface KeyClaimForCheck {
  readonly stepId: string;
  readonly stepOrder: number;
  readonly text: string;
  readonly sourceKeys: string[];
}

export interface CitationCheck {
  readonly citations: Citation[];
  /** Numbered references (`[3]`) the text uses with no reference entry that links to a source. */
  readonly unresolvedReferences: string[];
  /** Key claims none of whose supporting sources the deliverable cites. */
  readonly uncitedKeyClaims: KeyClaimForCheck[];
  /** Citations beyond MAX_CHECKED_CITATIONS were not checked. */
  readonly truncated: boolean;
}

/** A deliverable cites far fewer; the bound keeps the stored check small. */
export const MAX_CHECKED_CITATIONS = 500;

const URL_PATTERN = /https?:\/\/[^\s<>"'`]+/gi;
const DOI_PATTERN = /\b(?:doi:\s*)?10\.\d{4,9}\/[^\s<>"'`]+/gi;
const ARXIV_PATTERN = /\barxiv:\s*(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?\/\d{7})(?:v\d+)?/gi;

/** Prose punctuation after a link, and a closing bracket the link did not open (`[a](url)`, `(see url)`). */
function trimTrailing(found: string): string {
  let text = found;
  for (;;) {
    const last = text.at(-1);
    if (last === undefined) return text;
    if (".,;:!?*_~".includes(last)) {
      text = text.slice(0, -1);
      continue;
    }
    const open = last === ")" ? "(" : last === "]" ? "[" : undefined;
    if (open !== undefined && text.split(open).length <= text.split(last).length - 1) {
      text = text.slice(0, -1);
      continue;
    }
    return text;
  }
}

/** Every URL, DOI and arXiv id in `text`, as written, in order; DOIs inside a URL are the URL's. */
function identifiersIn(text: string): string[] {
  const found: { at: number; written: string }[] = [];
  const outsideUrls = text.replace(URL_PATTERN, (url, at: number) => {
    found.push({ at, written: trimTrailing(url) });
    return " ".repeat(url.length);
  });
  for (const pattern of [DOI_PATTERN, ARXIV_PATTERN]) {
    for (const match of outsideUrls.matchAll(pattern)) {
      found.push({ at: match.index, written: trimTrailing(match[0]) });
    }
  }
  return found.sort((a, b) => a.at - b.at).map(({ written }) => written);
}

const REFERENCE_HEADING =
  /^#{1,6}\s*(references|sources|bibliography|works cited|notes|citations)\b/i;
const BRACKET_ENTRY = /^\s*\[(\d{1,4})\]:?\s+(.*)$/;
const NUMBERED_ENTRY = /^\s*(\d{1,4})[.)]\s+(.*)$/;
const REFERENCE_USE = /\[(\d{1,4}(?:\s*[,–-]\s*\d{1,4})*)\]/g;

/** The numbered references the text uses that no entry resolves to a URL, DOI or arXiv id. */
function unresolvedReferences(content: string): string[] {
  const resolved = new Set<string>();
  const body: string[] = [];
  let inReferences = false;
  for (const line of content.split("\n")) {
    if (/^#{1,6}\s/.test(line)) inReferences = REFERENCE_HEADING.test(line);
    const entry = BRACKET_ENTRY.exec(line) ?? (inReferences ? NUMBERED_ENTRY.exec(line) : null);
    if (entry?.[1] !== undefined) {
      const links = identifiersIn(entry[2] ?? "").some((id) => canonicalSourceKey(id));
      if (links) resolved.add(String(Number(entry[1])));
      continue;
    }
    body.push(line);
  }
  const unresolved = new Set<string>();
  for (const match of body.join("\n").matchAll(REFERENCE_USE)) {
    // A link's text (`[1](https://…)`) cites through its link, not a reference list.
    if (body.join("\n")[match.index + match[0].length] === "(") continue;
    for (const part of (match[1] ?? "").split(",")) {
      const [from, to] = part.split(/[–-]/).map((n) => Number(n.trim()));
      if (from === undefined) continue;
      const last = to !== undefined && to >= from && to - from < 100 ? to : from;
      for (let n = from; n <= last; n++) {
        if (!resolved.has(String(n))) unresolved.add(`[${n}]`);
      }
    }
  }
  return [...unresolved];
}

/**
 * The check of a deliverable against the plan's source keys and key claims.
 * A key claim counts as cited when the deliverable cites any of its supporting
 * sources; Cairn cannot tell whether prose states a claim, so a key claim none
 * of whose sources is cited is reported for the agent (or reviewer) to judge.
 */
export function checkCitations(
  content: string,
  planSourceKeys: ReadonlySet<string>,
  keyClaims: readonly KeyClaimForCheck[],
): CitationCheck {
  const citations = new Map<string, Citation>();
  for (const written of identifiersIn(content)) {
    const source = canonicalSourceKey(written);
    if (!source || citations.has(source.key)) continue;
    citations.set(source.key, {
      written,
      key: source.key,
      href: source.href,
      status: planSourceKeys.has(source.key) ? "plan_source" : "not_read",
    });
  }
  const all = [...citations.values()];
  return {
    citations: all.slice(0, MAX_CHECKED_CITATIONS),
    unresolvedReferences: unresolvedReferences(content),
    uncitedKeyClaims: keyClaims.filter((claim) => !claim.sourceKeys.some((k) => citations.has(k))),
    truncated: all.length > MAX_CHECKED_CITATIONS,
  };
}
