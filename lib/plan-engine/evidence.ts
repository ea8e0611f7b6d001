/**
 * A plan's evidence (docs/evidence.md): the pages a step read, merged into one
 * source per canonical key, and the claims a step makes with the sources that
 * support or contradict them. The services store what is decided here.
 */
import { canonicalSourceKey, type SourceKind } from "./source-key";

/** A page, DOI or arXiv id as an agent reports reading it. */
export interface SourceRead {
  readonly url: string;
  readonly title?: string | undefined;
  readonly extract?: string | undefined;
  readonly contentDigest?: string | undefined;
}

/** A read merged under its canonical key. */
export interface MergedSource {
  readonly key: string;
  readonly kind: SourceKind;
  readonly href: string;
  readonly title: string | null;
  readonly extract: string | null;
  readonly contentDigest: string | null;
}

export interface SourceCitation {
  readonly source: string;
  readonly quote?: string | undefined;
  readonly locator?: string | undefined;
}

export interface ClaimInput {
  readonly text: string;
  readonly key?: boolean | undefined;
  readonly supports?: readonly SourceCitation[] | undefined;
  readonly contradicts?: readonly SourceCitation[] | undefined;
}

/** A citation once its source is known by key. */
export interface KeyedCitation {
  readonly sourceKey: string;
  readonly quote: string | null;
  readonly locator: string | null;
}

export interface KeyedClaim {
  readonly text: string;
  readonly key: boolean;
  readonly supports: readonly KeyedCitation[];
  readonly contradicts: readonly KeyedCitation[];
}

export const CLAIM_STATUSES = ["unsupported", "contested", "supported"] as const;
export type ClaimStatus = (typeof CLAIM_STATUSES)[number];

/** Unsupported when nothing supports it; contested when something contradicts it (even if supported). */
export function claimStatus(claim: Pick<KeyedClaim, "supports" | "contradicts">): ClaimStatus {
  if (claim.supports.length === 0) return "unsupported";
  if (claim.contradicts.length > 0) return "contested";
  return "supported";
}

/** The order a reviewer reads claims in: unsupported, then contested, then supported; stable otherwise. */
export function claimsForReview<T extends Pick<KeyedClaim, "supports" | "contradicts">>(
  claims: readonly T[],
): T[] {
  const rank = (claim: T) => CLAIM_STATUSES.indexOf(claimStatus(claim));
  return claims
    .map((claim, index) => ({ claim, index }))
    .sort((a, b) => rank(a.claim) - rank(b.claim) || a.index - b.index)
    .map(({ claim }) => claim);
}

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;

/** The first field of `item` among `names` that holds text. */
const firstText = (item: Record<string, unknown>, names: readonly string[]) =>
  names.map((name) => text(item[name])).find((value) => value !== undefined);

/**
 * The pages an execution report's `webFetches` names. The report is free-form
 * (docs/execution-loop.md), so an item is a URL, or an object whose `url`
 * (`href`, `link`, `source`) names it; an item naming no page is left out,
 * never refused, since the report was valid before evidence existed.
 */
export function sourcesFromFetches(fetches: readonly unknown[]): SourceRead[] {
  const reads: SourceRead[] = [];
  for (const item of fetches) {
    if (typeof item === "string") {
      reads.push({ url: item });
      continue;
    }
    if (typeof item !== "object" || item === null || Array.isArray(item)) continue;
    const record = item as Record<string, unknown>;
    const url = firstText(record, ["url", "href", "link", "source", "doi"]);
    if (url === undefined) continue;
    reads.push({
      url,
      title: firstText(record, ["title"]),
      extract: firstText(record, ["extract", "extracted", "extractedFacts", "summary", "facts"]),
      contentDigest: firstText(record, ["contentDigest", "digest", "sha256"]),
    });
  }
  return reads;
}

/** `sha256:<64 hex>`, the one spelling a content digest is kept in. */
export function normalContentDigest(digest: string): string | undefined {
  const hex = /^(?:sha256:)?([0-9a-f]{64})$/i.exec(digest.trim())?.[1];
  return hex === undefined ? undefined : `sha256:${hex.toLowerCase()}`;
}

/**
 * Reads merged by canonical key, in first-seen order: the first read of a key
 * gives its link, and its title, extract and digest unless a later read of the
 * same key is the first to have one. Reads that name no page or carry a
 * malformed digest come back in `unreadable` (an explicit source is refused for
 * them; a fetch is only left out).
 */
export function mergeSourceReads(reads: readonly SourceRead[]): {
  sources: MergedSource[];
  unreadable: SourceRead[];
} {
  const byKey = new Map<string, MergedSource>();
  const unreadable: SourceRead[] = [];
  for (const read of reads) {
    const canonical = canonicalSourceKey(read.url);
    const digest =
      read.contentDigest === undefined ? undefined : normalContentDigest(read.contentDigest);
    if (!canonical || (read.contentDigest !== undefined && digest === undefined)) {
      unreadable.push(read);
      continue;
    }
    const seen = byKey.get(canonical.key);
    byKey.set(canonical.key, {
      key: canonical.key,
      kind: canonical.kind,
      href: seen?.href ?? canonical.href,
      title: seen?.title ?? read.title ?? null,
      extract: seen?.extract ?? read.extract ?? null,
      contentDigest: seen?.contentDigest ?? digest ?? null,
    });
  }
  return { sources: [...byKey.values()], unreadable };
}

/**
 * Claims with each citation's source turned into its key. A citation whose
 * source is no page, or is none the plan knows (`known`: read before, or in the
 * same change), is an error for the caller to refuse with: a claim may rest
 * only on what the plan read.
 */
export function keyClaims(
  claims: readonly ClaimInput[],
  known: ReadonlySet<string>,
): { claims: KeyedClaim[]; errors: string[] } {
  const errors: string[] = [];
  const keyed = claims.map((claim, c) => {
    const cite = (list: readonly SourceCitation[] | undefined, field: string) =>
      (list ?? []).flatMap((citation, i): KeyedCitation[] => {
        const key = canonicalSourceKey(citation.source)?.key;
        const at = `claims[${c}].${field}[${i}].source`;
        if (key === undefined) {
          errors.push(`${at}: "${citation.source}" is not a URL, DOI or arXiv id`);
          return [];
        }
        if (!known.has(key)) {
          errors.push(
            `${at}: "${citation.source}" is not a source of the plan; report it in webFetches or evidence.sources first`,
          );
          return [];
        }
        return [
          { sourceKey: key, quote: citation.quote ?? null, locator: citation.locator ?? null },
        ];
      });
    return {
      text: claim.text,
      key: claim.key ?? false,
      supports: cite(claim.supports, "supports"),
      contradicts: cite(claim.contradicts, "contradicts"),
    };
  });
  return { claims: keyed, errors };
}
