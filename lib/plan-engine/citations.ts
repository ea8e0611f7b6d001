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

/**
 * Prose punctuation after a link, and a closing bracket the link did not open
 * (`[a](url)`, `(see url)`). Linear: the brackets are counted once and the
 * counts kept as the end is trimmed (a link of 30,000 `)` once took 30 s).
 */
function trimTrailing(found: string): string {
  const opened = new Map<string, number>([
    [")", 0],
    ["]", 0],
  ]);
  const closed = new Map(opened);
  const opener: Record<string, string> = { "(": ")", "[": "]" };
  for (const char of found) {
    const pair = opener[char];
    if (pair !== undefined) opened.set(pair, (opened.get(pair) ?? 0) + 1);
    else if (closed.has(char)) closed.set(char, (closed.get(char) ?? 0) + 1);
  }
  let end = found.length;
  while (end > 0) {
    const last = found[end - 1] ?? "";
    const closes = closed.get(last);
    if (".,;:!?*_~".includes(last)) end--;
    else if (closes !== undefined && (opened.get(last) ?? 0) < closes) {
      closed.set(last, closes - 1);
      end--;
    } else break;
  }
  return found.slice(0, end);
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
  // Joined once: joining per use made `[1]\n` × 15,000 take 30 s.
  const text = body.join("\n");
  for (const match of text.matchAll(REFERENCE_USE)) {
    // A link's text (`[1](https://…)`) cites through its link, not a reference list.
    if (text[match.index + match[0].length] === "(") continue;
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

/** What a deliverable cites, found before its plan is read: linear in the text, and done outside any transaction. */
export interface CitationScan {
  /** One per source, in the order first cited. */
  readonly cited: ReadonlyMap<string, Omit<Citation, "status">>;
  readonly unresolvedReferences: string[];
}

export function scanCitations(content: string): CitationScan {
  const cited = new Map<string, Omit<Citation, "status">>();
  for (const written of identifiersIn(content)) {
    const source = canonicalSourceKey(written);
    if (!source || cited.has(source.key)) continue;
    cited.set(source.key, { written, key: source.key, href: source.href });
  }
  return { cited, unresolvedReferences: unresolvedReferences(content) };
}

/**
 * The check of a deliverable's scan against the plan's source keys and key claims.
 * A key claim counts as cited when the deliverable cites any of its supporting
 * sources; Cairn cannot tell whether prose states a claim, so a key claim none
 * of whose sources is cited is reported for the agent (or reviewer) to judge.
 */
export function checkCitations(
  scan: CitationScan,
  planSourceKeys: ReadonlySet<string>,
  keyClaims: readonly KeyClaimForCheck[],
): CitationCheck {
  const all = [...scan.cited.values()];
  return {
    citations: all.slice(0, MAX_CHECKED_CITATIONS).map((citation) => ({
      ...citation,
      status: planSourceKeys.has(citation.key) ? "plan_source" : "not_read",
    })),
    unresolvedReferences: scan.unresolvedReferences,
    uncitedKeyClaims: keyClaims.filter((claim) => !claim.sourceKeys.some((k) => scan.cited.has(k))),
    truncated: all.length > MAX_CHECKED_CITATIONS,
  };
}
