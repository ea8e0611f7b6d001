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
  /**
   * Citations beyond MAX_CHECKED_CITATIONS were not checked, or the lists were
   * cut to CITATION_CHECK_BYTES.
   */
  readonly truncated: boolean;
}

/** A deliverable cites far fewer; the bound keeps the stored check small. */
export const MAX_CHECKED_CITATIONS = 500;

/**
 * The most JSON text of each of the check's lists (its citations, its
 * uncited key claims). Every reader of the deliverable shows the check whole:
 * 240 links of 2,000 characters that percent-encoding triples made it 6.6 MB
 * in store_research_output's answer and get_research_context, and 10 MB on
 * the plan page.
 */
export const CITATION_CHECK_BYTES = 64 * 1024;

const utf8 = new TextEncoder();

/** The first of `items` whose JSON text fits in CITATION_CHECK_BYTES. */
function fittingCheck<T>(items: readonly T[]): T[] {
  let bytes = 0;
  for (let i = 0; i < items.length; i++) {
    bytes += utf8.encode(JSON.stringify(items[i])).length;
    if (bytes > CITATION_CHECK_BYTES) return items.slice(0, i);
  }
  return [...items];
}

const URL_PATTERN = /https?:\/\/[^\s<>"'`]+/gi;
const DOI_PATTERN = /\b(?:doi:\s*)?10\.\d{4,9}\/[^\s<>"'`]+/gi;
const ARXIV_PATTERN = /\barxiv:\s*(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?\/\d{7})(?:v\d+)?/gi;

/**
 * Prose punctuation after a link, and a closing bracket the link did not open
 * (`[a](url)`, `(see url)`). Linear: the brackets are counted once and the
 * counts kept as the end is trimmed (a link of 30,000 `)` once took 30 s).
 */
function trimTrailing(found: string): string {
  let openRound = 0;
  let openSquare = 0;
  let closedRound = 0;
  let closedSquare = 0;
  for (let i = 0; i < found.length; i++) {
    const code = found.charCodeAt(i);
    if (code === 40) openRound++;
    else if (code === 41) closedRound++;
    else if (code === 91) openSquare++;
    else if (code === 93) closedSquare++;
  }
  let end = found.length;
  while (end > 0) {
    const last = found[end - 1] ?? "";
    if (".,;:!?*_~".includes(last)) end--;
    else if (last === ")" && openRound < closedRound) {
      closedRound--;
      end--;
    } else if (last === "]" && openSquare < closedSquare) {
      closedSquare--;
      end--;
    } else break;
  }
  return found.slice(0, end);
}

/**
 * The longest identifier worth resolving: no source's link is longer
 * (`evidence.sources[].url`, docs/evidence.md), so a longer one cannot be a
 * source the plan read, and parsing a link of 500,000 characters (its query
 * parameters sorted) would cost the whole event loop's time.
 */
const MAX_IDENTIFIER_CHARS = 2_000;

/**
 * The canonical key of each identifier as written, resolved once: a
 * deliverable repeating one link 20,000 times parses it once.
 */
function keyResolver() {
  const known = new Map<string, ReturnType<typeof canonicalSourceKey>>();
  return (written: string) => {
    if (written.length > MAX_IDENTIFIER_CHARS) return undefined;
    if (known.has(written)) return known.get(written);
    const key = canonicalSourceKey(written);
    known.set(written, key);
    return key;
  };
}

/** True once every 64 calls: where a scan yields, so a yield costs little beside the work. */
function pacer() {
  let work = 0;
  return () => (++work & 63) === 0;
}

/**
 * Every URL, DOI and arXiv id in `text`, as written, in order; DOIs inside a
 * URL are the URL's. Yields (undefined) after each piece of work, so a caller
 * can let other requests run between them (`scanCitationsInSlices`).
 */
function* identifiersIn(text: string): Generator<undefined, string[]> {
  const pace = pacer();
  const found: { at: number; written: string }[] = [];
  const outside: string[] = [];
  let from = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    found.push({ at: match.index, written: trimTrailing(match[0]) });
    outside.push(text.slice(from, match.index), " ".repeat(match[0].length));
    from = match.index + match[0].length;
    if (pace()) yield;
  }
  outside.push(text.slice(from));
  const outsideUrls = outside.join("");
  for (const pattern of [DOI_PATTERN, ARXIV_PATTERN]) {
    for (const match of outsideUrls.matchAll(pattern)) {
      found.push({ at: match.index, written: trimTrailing(match[0]) });
      if (pace()) yield;
    }
  }
  return found.sort((a, b) => a.at - b.at).map(({ written }) => written);
}

const REFERENCE_HEADING =
  /^#{1,6}\s*(references|sources|bibliography|works cited|notes|citations)\b/i;
const BRACKET_ENTRY = /^\s*\[(\d{1,4})\]:?\s+(.*)$/;
const NUMBERED_ENTRY = /^\s*(\d{1,4})[.)]\s+(.*)$/;
const REFERENCE_USE = /\[(\d{1,4}(?:\s*[,–-]\s*\d{1,4})*)\]/g;

/** The largest number a reference can write (REFERENCE_USE reads at most four digits). */
const MAX_REFERENCE_NUMBER = 9_999;

/** The numbered references the text uses that no entry resolves to a URL, DOI or arXiv id, in numeric order. */
function* unresolvedReferences(
  content: string,
  keyOf: (written: string) => ReturnType<typeof canonicalSourceKey>,
): Generator<undefined, string[]> {
  const pace = pacer();
  const resolved = new Set<string>();
  const body: string[] = [];
  let inReferences = false;
  for (const line of content.split("\n")) {
    if (/^#{1,6}\s/.test(line)) inReferences = REFERENCE_HEADING.test(line);
    const entry = BRACKET_ENTRY.exec(line) ?? (inReferences ? NUMBERED_ENTRY.exec(line) : null);
    if (pace()) yield;
    if (entry?.[1] !== undefined) {
      const ids = yield* identifiersIn(entry[2] ?? "");
      if (ids.some((id) => keyOf(id))) resolved.add(String(Number(entry[1])));
      continue;
    }
    body.push(line);
  }
  // The numbers used, as a difference array over every number a use can write
  // (at most four digits): a range adds one at its first and takes one after
  // its last, so a use of 100,000 ranges costs 100,000 steps, not one per
  // number in them (10^7, seconds on the event loop without a yield).
  const covered = new Int32Array(MAX_REFERENCE_NUMBER + 2);
  // Joined once: joining per use made `[1]\n` × 15,000 take 30 s.
  const text = body.join("\n");
  // A use written before reads the same: `[1]` × 125,000 is split once.
  const read = new Set<string>();
  for (const match of text.matchAll(REFERENCE_USE)) {
    if (pace()) yield;
    // A link's text (`[1](https://…)`) cites through its link, not a reference list.
    if (text[match.index + match[0].length] === "(") continue;
    const use = match[1] ?? "";
    if (read.has(use)) continue;
    read.add(use);
    for (const part of use.split(",")) {
      const [from, to] = part.split(/[–-]/).map((n) => Number(n.trim()));
      if (from === undefined) continue;
      const last = to !== undefined && to >= from && to - from < 100 ? to : from;
      if (pace()) yield;
      covered[from] = (covered[from] ?? 0) + 1;
      covered[last + 1] = (covered[last + 1] ?? 0) - 1;
    }
  }
  const unresolved: string[] = [];
  if (read.size === 0) return unresolved;
  for (let n = 0, depth = 0; n <= MAX_REFERENCE_NUMBER; n++) {
    depth += covered[n] ?? 0;
    if (depth > 0 && !resolved.has(String(n))) unresolved.push(`[${n}]`);
  }
  return unresolved;
}

/** What a deliverable cites, found before its plan is read: linear in the text, and done outside any transaction. */
export interface CitationScan {
  /** One per source, in the order first cited. */
  readonly cited: ReadonlyMap<string, Omit<Citation, "status">>;
  readonly unresolvedReferences: string[];
}

/**
 * The scan as steps: it yields after each small piece of work (a match, a
 * line, an identifier resolved), so the service can give the event loop to
 * other requests between slices of a large deliverable
 * (`scanCitationsInSlices`); the engine itself keeps no clock.
 */
export function* citationScanSteps(content: string): Generator<undefined, CitationScan> {
  const pace = pacer();
  const cited = new Map<string, Omit<Citation, "status">>();
  const keyOf = keyResolver();
  for (const written of yield* identifiersIn(content)) {
    const source = keyOf(written);
    if (pace()) yield;
    if (!source || cited.has(source.key)) continue;
    cited.set(source.key, { written, key: source.key, href: source.href });
  }
  return { cited, unresolvedReferences: yield* unresolvedReferences(content, keyOf) };
}

/** The whole scan at once (tests, and text known to be short). */
export function scanCitations(content: string): CitationScan {
  const steps = citationScanSteps(content);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
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
  const checked = all.slice(0, MAX_CHECKED_CITATIONS).map(
    (citation): Citation => ({
      ...citation,
      status: planSourceKeys.has(citation.key) ? "plan_source" : "not_read",
    }),
  );
  const uncited = keyClaims.filter((claim) => !claim.sourceKeys.some((k) => scan.cited.has(k)));
  const citations = fittingCheck(checked);
  const uncitedKeyClaims = fittingCheck(uncited);
  return {
    citations,
    unresolvedReferences: scan.unresolvedReferences,
    uncitedKeyClaims,
    truncated: citations.length < all.length || uncitedKeyClaims.length < uncited.length,
  };
}
