/**
 * A plan's evidence as the readers take it (docs/evidence.md): its sources and
 * every step's claims with their citations resolved to the sources' links and
 * titles. get_research_context, get_step_context, the plan and review pages
 * and the JSON export read it through here.
 */
import "server-only";
import { and, asc, count, eq } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { type ClaimCitation, planSources, planSteps, stepClaims } from "../../db/schema";
import { CLAIM_STATUSES, claimStatus } from "../../plan-engine/evidence";
import { hrefOfSourceKey } from "../../plan-engine/source-key";
import { fitting } from "../shared/bounded";
import type { ServiceContext } from "../shared/context";
import { cursorField, keyset, nextCursorField } from "../shared/pagination";

/** How much of an extract or a quote a page of evidence shows; read_evidence gives one whole. */
export const EVIDENCE_PREVIEW_CHARS = 300;
/**
 * The most JSON text of one page's sources, and of its claims: a page stops
 * before the item that would pass it (and holds at least one item), so a
 * context's evidence stays a few hundred KB however much the plan holds
 * (docs/evidence.md, "Who reads it").
 */
export const EVIDENCE_PAGE_BYTES = 128 * 1024;
/** The most rows one page reads, before its size is counted. */
const EVIDENCE_PAGE_ROWS = 100;

const citationOutput = z.object({
  sourceKey: z.string(),
  href: z.string(),
  quote: z.string().nullable(),
  /** The quote is cut to its first 300 characters: read_evidence with the claimId gives it whole. */
  quoteShortened: z.boolean(),
  locator: z.string().nullable(),
});

const sourceOutput = z.object({
  /** The canonical URL, doi:… or arxiv:… the spellings merge under. */
  sourceKey: z.string(),
  kind: z.enum(["url", "doi", "arxiv"]),
  href: z.string(),
  title: z.string().nullable(),
  extract: z.string().nullable(),
  /** The extract is cut to its first 300 characters: read_evidence with the sourceKey gives it whole. */
  extractShortened: z.boolean(),
  contentDigest: z.string().nullable(),
  firstStepId: z.string().nullable(),
  firstStepOrder: z.number().nullable(),
  firstReadAt: z.string(),
});

const claimOutput = z.object({
  claimId: z.string(),
  stepId: z.string(),
  stepOrder: z.number(),
  text: z.string(),
  key: z.boolean(),
  status: z.enum(CLAIM_STATUSES),
  supports: z.array(citationOutput),
  contradicts: z.array(citationOutput),
});

/**
 * A page of the plan's sources (one per page, DOI or arXiv paper, first read
 * first) and of its claims (in the order recorded), each unsupported, contested
 * or supported. Long extracts and quotes are shortened; read_evidence reads on
 * and gives one whole.
 */
export const planEvidenceOutput = z.object({
  sources: z.array(sourceOutput),
  sourcesTotal: z.number().int(),
  /** Passed back as read_evidence's sourcesCursor for the next page of sources; null on the last. */
  sourcesNextCursor: nextCursorField,
  claims: z.array(claimOutput),
  claimsTotal: z.number().int(),
  /** Passed back as read_evidence's claimsCursor for the next page of claims; null on the last. */
  claimsNextCursor: nextCursorField,
});

export type PlanEvidence = z.infer<typeof planEvidenceOutput>;
export type EvidenceClaim = PlanEvidence["claims"][number];

/**
 * Where each list of a plan's evidence starts (the previous page's next
 * cursors), and the most JSON text of each list's page (EVIDENCE_PAGE_BYTES
 * unless a reader that shows it larger, a page of HTML, asks for less).
 */
export type EvidenceCursors = { sourcesCursor?: string; claimsCursor?: string; pageBytes?: number };

export const evidenceCursorFields = {
  sourcesCursor: cursorField.describe("The previous evidence.sourcesNextCursor."),
  claimsCursor: cursorField.describe("The previous evidence.claimsNextCursor."),
};

const sourceOrder = (cursor: string | undefined) =>
  keyset(
    { list: "plan sources", at: planSources.firstReadAt, id: planSources.id, direction: "asc" },
    cursor,
    "sourcesCursor",
  );
const claimOrder = (cursor: string | undefined) =>
  keyset(
    {
      list: "plan claims",
      at: stepClaims.position,
      sequence: true,
      id: stepClaims.id,
      direction: "asc",
    },
    cursor,
    "claimsCursor",
  );

/** The first `max` characters of `text`, and whether it was cut (never half a surrogate pair). */
function preview(text: string | null, max = EVIDENCE_PREVIEW_CHARS) {
  if (text === null || text.length <= max) return { text, shortened: false };
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return { text: text.slice(0, end), shortened: true };
}

const tenantPlanSources = (ctx: Pick<ServiceContext, "tenantId">, planId: string) =>
  and(eq(planSources.tenantId, ctx.tenantId), eq(planSources.planId, planId));
const tenantPlanClaims = (ctx: Pick<ServiceContext, "tenantId">, planId: string) =>
  and(eq(stepClaims.tenantId, ctx.tenantId), eq(stepClaims.planId, planId));

type SourceRow = typeof planSources.$inferSelect;
type ClaimRow = typeof stepClaims.$inferSelect;

const sourceView = (source: SourceRow, firstStepOrder: number | null, whole = false) => {
  const extract = whole ? { text: source.extract, shortened: false } : preview(source.extract);
  return {
    sourceKey: source.canonicalKey,
    kind: source.kind,
    href: source.href,
    title: source.title,
    extract: extract.text,
    extractShortened: extract.shortened,
    contentDigest: source.contentDigest,
    firstStepId: source.firstStepId,
    firstStepOrder,
    firstReadAt: source.firstReadAt.toISOString(),
  };
};

/** A citation as read: its source's key and link, never its title (the source list has it once). */
const citationsView = (citations: ClaimCitation[], whole = false) =>
  citations.map((citation) => {
    const quote = whole ? { text: citation.quote, shortened: false } : preview(citation.quote);
    return {
      sourceKey: citation.sourceKey,
      href: hrefOfSourceKey(citation.sourceKey),
      quote: quote.text,
      quoteShortened: quote.shortened,
      locator: citation.locator,
    };
  });

const claimView = (claim: ClaimRow, stepOrder: number, whole = false) => ({
  claimId: claim.id,
  stepId: claim.stepId,
  stepOrder,
  text: claim.text,
  key: claim.keyClaim,
  status: claimStatus(claim),
  supports: citationsView(claim.supports, whole),
  contradicts: citationsView(claim.contradicts, whole),
});

/** One page of a plan's sources and one of its claims, each within EVIDENCE_PAGE_BYTES. */
export async function loadPlanEvidence(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  cursors: EvidenceCursors = {},
): Promise<PlanEvidence> {
  const sourcePage = sourceOrder(cursors.sourcesCursor);
  const claimPage = claimOrder(cursors.claimsCursor);
  const sourceRows = await db
    .select({ source: planSources, firstStepOrder: planSteps.stepOrder, ...sourcePage.position })
    .from(planSources)
    .leftJoin(planSteps, eq(planSteps.id, planSources.firstStepId))
    .where(and(tenantPlanSources(ctx, planId), sourcePage.where))
    .orderBy(...sourcePage.orderBy)
    .limit(EVIDENCE_PAGE_ROWS + 1);
  const claimRows = await db
    .select({ claim: stepClaims, stepOrder: planSteps.stepOrder, ...claimPage.position })
    .from(stepClaims)
    .innerJoin(planSteps, eq(planSteps.id, stepClaims.stepId))
    .where(and(tenantPlanClaims(ctx, planId), claimPage.where))
    .orderBy(...claimPage.orderBy)
    .limit(EVIDENCE_PAGE_ROWS + 1);
  const [sourcesHeld] = await db
    .select({ n: count() })
    .from(planSources)
    .where(tenantPlanSources(ctx, planId));
  const [claimsHeld] = await db
    .select({ n: count() })
    .from(stepClaims)
    .where(tenantPlanClaims(ctx, planId));

  const sources = sourceRows
    .slice(0, EVIDENCE_PAGE_ROWS)
    .map((row) => ({ row, view: sourceView(row.source, row.firstStepOrder) }));
  const claims = claimRows
    .slice(0, EVIDENCE_PAGE_ROWS)
    .map((row) => ({ row, view: claimView(row.claim, row.stepOrder) }));
  const budget = cursors.pageBytes ?? EVIDENCE_PAGE_BYTES;
  const sourcesFit = fitting(
    sources.map((s) => s.view),
    budget,
  );
  const claimsFit = fitting(
    claims.map((c) => c.view),
    budget,
  );
  // Rows beyond what fits are left for the next page: the cursor follows the last one shown.
  const sourcesShown = sourcePage.pageOf(
    sourcesFit < sourceRows.length ? sourceRows.slice(0, sourcesFit + 1) : sourceRows,
    sourcesFit,
  );
  const claimsShown = claimPage.pageOf(
    claimsFit < claimRows.length ? claimRows.slice(0, claimsFit + 1) : claimRows,
    claimsFit,
  );
  return {
    sources: sources.slice(0, sourcesFit).map((s) => s.view),
    sourcesTotal: sourcesHeld?.n ?? 0,
    sourcesNextCursor: sourcesShown.nextCursor,
    claims: claims.slice(0, claimsFit).map((c) => c.view),
    claimsTotal: claimsHeld?.n ?? 0,
    claimsNextCursor: claimsShown.nextCursor,
  };
}

/** One source with its whole extract, or undefined when the plan never read it. */
export async function loadEvidenceSource(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  sourceKey: string,
) {
  const [row] = await db
    .select({ source: planSources, firstStepOrder: planSteps.stepOrder })
    .from(planSources)
    .leftJoin(planSteps, eq(planSteps.id, planSources.firstStepId))
    .where(and(tenantPlanSources(ctx, planId), eq(planSources.canonicalKey, sourceKey)));
  return row ? sourceView(row.source, row.firstStepOrder, true) : undefined;
}

/** One claim with its whole quotes, or undefined when the plan holds no such claim. */
export async function loadEvidenceClaim(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  claimId: string,
) {
  const [row] = await db
    .select({ claim: stepClaims, stepOrder: planSteps.stepOrder })
    .from(stepClaims)
    .innerJoin(planSteps, eq(planSteps.id, stepClaims.stepId))
    .where(and(tenantPlanClaims(ctx, planId), eq(stepClaims.id, claimId)));
  return row ? claimView(row.claim, row.stepOrder, true) : undefined;
}

export const wholeSourceOutput = sourceOutput;
export const wholeClaimOutput = claimOutput;

/**
 * Every source and claim of a plan, whole, for the JSON export: a download
 * rather than a page or an answer, bounded by the plan's total of evidence
 * (MAX_PLAN_EVIDENCE_BYTES, docs/evidence.md "Limits").
 */
export async function loadWholePlanEvidence(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
) {
  const sourceRows = await db
    .select({ source: planSources, firstStepOrder: planSteps.stepOrder })
    .from(planSources)
    .leftJoin(planSteps, eq(planSteps.id, planSources.firstStepId))
    .where(tenantPlanSources(ctx, planId))
    .orderBy(asc(planSources.firstReadAt), asc(planSources.id));
  const claimRows = await db
    .select({ claim: stepClaims, stepOrder: planSteps.stepOrder })
    .from(stepClaims)
    .innerJoin(planSteps, eq(planSteps.id, stepClaims.stepId))
    .where(tenantPlanClaims(ctx, planId))
    .orderBy(asc(stepClaims.position), asc(stepClaims.id));
  return {
    sources: sourceRows.map((row) => sourceView(row.source, row.firstStepOrder, true)),
    claims: claimRows.map((row) => claimView(row.claim, row.stepOrder, true)),
  };
}
