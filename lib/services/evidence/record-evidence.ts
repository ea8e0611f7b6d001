/**
 * Writes a step's evidence (docs/evidence.md) inside its caller's transaction:
 * the sources it read, merged into the plan's by canonical key, its claims, and
 * the `evidence_recorded` audit row. submit_step_result, add_step_evidence and
 * store_research all write through here.
 */
import "server-only";
import { and, count, eq, max, sql } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { planSources, stepClaims } from "../../db/schema";
import { arrayParam } from "../../db/statement";
import { AppError } from "../../plan-engine/app-error";
import {
  type ClaimInput,
  claimStatus,
  keyClaims,
  mergeSourceReads,
  normalContentDigest,
  type SourceRead,
} from "../../plan-engine/evidence";
import { canonicalSourceKey } from "../../plan-engine/source-key";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";

/** A plan reads at most this many sources and makes this many claims (docs/evidence.md, "Limits"). */
export const MAX_PLAN_SOURCES = 500;
export const MAX_PLAN_CLAIMS = 500;
export const MAX_SOURCES_PER_CHANGE = 100;
export const MAX_CLAIMS_PER_CHANGE = 50;
export const MAX_CITATIONS_PER_CLAIM = 20;
export const MAX_EXTRACT_CHARS = 4_000;
const MAX_TITLE_CHARS = 500;
/**
 * The most text a plan's evidence holds, all sources and claims together (their
 * links, titles, extracts, claims, quotes and locators, in UTF-8 bytes): what
 * the JSON export sends whole. The per-item limits alone would let one plan
 * hold about 90 MB.
 */
export const MAX_PLAN_EVIDENCE_BYTES = 8 * 1024 * 1024;

const sourceField = z
  .string()
  .trim()
  .max(2_000)
  .refine((text) => canonicalSourceKey(text) !== undefined, {
    message:
      "must be an http(s) URL, a DOI (10.…, doi:10.…, https://doi.org/10.…) or an arXiv id (arXiv:2101.01234)",
  });

const sourceInput = z.object({
  url: sourceField.describe("URL, DOI or arXiv id."),
  title: z.string().trim().max(MAX_TITLE_CHARS).optional(),
  extract: z.string().trim().max(MAX_EXTRACT_CHARS).optional(),
  contentDigest: z
    .string()
    .trim()
    .max(80)
    .refine((digest) => normalContentDigest(digest) !== undefined, {
      message: "must be the SHA-256 of the text you read, as 64 hex digits (optionally sha256:…)",
    })
    .optional()
    .describe("SHA-256 of the text read."),
});

const citationInput = z.object({
  source: sourceField,
  quote: z.string().trim().max(2_000).optional(),
  locator: z.string().trim().max(200).optional(),
});

const claimInput = z.object({
  text: z.string().trim().min(1, "must not be empty").max(2_000),
  key: z.boolean().optional().describe("The deliverable rests on it (cite its sources)."),
  supports: z.array(citationInput).max(MAX_CITATIONS_PER_CLAIM).optional(),
  contradicts: z.array(citationInput).max(MAX_CITATIONS_PER_CLAIM).optional(),
});

export const evidenceInput = z
  .object({
    sources: z
      .array(sourceInput)
      .max(MAX_SOURCES_PER_CHANGE)
      .optional()
      .describe("Pages beyond webFetches, or with extract and digest."),
    claims: z
      .array(claimInput)
      .max(MAX_CLAIMS_PER_CHANGE)
      .optional()
      .describe(
        "Each with supporting sources read by this or an earlier step (quote, or locator: page, section, table) and any contradicting: unsupported without, contested with one.",
      ),
  })
  .describe("Claims, and sources beyond webFetches (merged by URL, DOI or arXiv id).");

export type EvidenceInput = z.output<typeof evidenceInput>;

/** What a change recorded, as the tools answer it. */
export const recordedEvidenceOutput = z.object({
  /** Sources this change read (after merging spellings). */
  sources: z.number(),
  /** Of those, sources the plan had not read before. */
  newSources: z.number(),
  claims: z.array(
    z.object({ text: z.string(), status: z.enum(["unsupported", "contested", "supported"]) }),
  ),
});

export type RecordedEvidence = z.infer<typeof recordedEvidenceOutput>;

type ChangeBase = {
  planId: string;
  stepOrder: number | null;
  /** Read from the execution report or an artifact: what names no page is left out. */
  fetched: readonly SourceRead[];
  now: string;
};

/** A step's result or an addition to it (claims need their step), or an artifact's sources. */
export type EvidenceChange = ChangeBase &
  (
    | { origin: "step_result" | "added"; stepId: string; evidence: EvidenceInput | undefined }
    | { origin: "artifact"; stepId: string | null; artifactId: string; evidence?: undefined }
  );

const clip = (text: string | undefined, chars: number) =>
  text === undefined ? undefined : text.slice(0, chars);

/** Whether a change has anything to record; the one-statement submit is taken only when not. */
export function hasEvidence(fetched: readonly SourceRead[], evidence: EvidenceInput | undefined) {
  return (
    (evidence?.sources?.length ?? 0) > 0 ||
    (evidence?.claims?.length ?? 0) > 0 ||
    mergeSourceReads(fetched).sources.length > 0
  );
}

const textBytes = (...texts: (string | null | undefined)[]) =>
  texts.reduce((sum, text) => sum + (text ? Buffer.byteLength(text, "utf8") : 0), 0);

/**
 * Refuses a change that would take the plan's evidence over
 * MAX_PLAN_EVIDENCE_BYTES: what it holds is summed in the database (at most
 * the 1,000 rows the plan's limits allow), under the plan's lock.
 */
async function checkPlanTotal(
  tx: Transaction,
  ctx: ServiceContext,
  planId: string,
  added: readonly { key: string; href: string; title?: string | null; extract?: string | null }[],
  claims: ReturnType<typeof keyClaims>["claims"],
) {
  if (added.length === 0 && claims.length === 0) return;
  const adding =
    added.reduce((sum, s) => sum + textBytes(s.key, s.href, s.title, s.extract), 0) +
    claims.reduce(
      (sum, claim) =>
        sum +
        textBytes(claim.text) +
        [...claim.supports, ...claim.contradicts].reduce(
          (n, c) => n + textBytes(c.sourceKey, c.quote, c.locator),
          0,
        ),
      0,
    );
  const [held] = await selectRows(
    tx,
    z.object({ bytes: z.coerce.number() }),
    sql`
    select (
      select coalesce(sum(octet_length(canonical_key) + octet_length(href)
        + coalesce(octet_length(title), 0) + coalesce(octet_length(extract), 0)), 0)
      from plan_source where tenant_id = ${ctx.tenantId}::uuid and plan_id = ${planId}::uuid
    ) + (
      select coalesce(sum(octet_length(text) + octet_length(supports::text)
        + octet_length(contradicts::text)), 0)
      from step_claim where tenant_id = ${ctx.tenantId}::uuid and plan_id = ${planId}::uuid
    ) as bytes`,
  );
  const total = (held?.bytes ?? 0) + adding;
  if (total > MAX_PLAN_EVIDENCE_BYTES) {
    refuse(
      `evidence: the plan's evidence would hold ${total.toLocaleString("en-US")} bytes of text, over the limit of ${MAX_PLAN_EVIDENCE_BYTES.toLocaleString("en-US")}; keep extracts and quotes to the passages the claims rest on.`,
    );
  }
}

function refuse(message: string): never {
  throw new AppError("VALIDATION_ERROR", message);
}

export async function recordEvidence(
  tx: Transaction,
  ctx: ServiceContext,
  change: EvidenceChange,
): Promise<RecordedEvidence> {
  const explicit: SourceRead[] = change.evidence?.sources ?? [];
  const fetched = change.fetched.map((read) => ({
    ...read,
    title: clip(read.title, MAX_TITLE_CHARS),
    extract: clip(read.extract, MAX_EXTRACT_CHARS),
  }));
  // Explicit sources first: their title, extract and digest win over a fetch's.
  const { sources } = mergeSourceReads([...explicit, ...fetched]);
  const claimsIn: ClaimInput[] = change.evidence?.claims ?? [];
  const cited = claimsIn.flatMap((claim) =>
    [...(claim.supports ?? []), ...(claim.contradicts ?? [])].flatMap(
      (citation) => canonicalSourceKey(citation.source)?.key ?? [],
    ),
  );
  const wanted = [...new Set([...sources.map((s) => s.key), ...cited])];
  if (wanted.length === 0 && claimsIn.length === 0) {
    return { sources: 0, newSources: 0, claims: [] };
  }
  // Every caller holds the plan's row for update (submit_step_result's
  // lockPlanForSubmit; add_step_evidence and store_research through
  // lockPlanForWork): it orders two changes of one plan's evidence, so the
  // limits below hold however many run at once.
  const tenantPlan = and(
    eq(planSources.tenantId, ctx.tenantId),
    eq(planSources.planId, change.planId),
  );
  // One array parameter, so a list of any length is one prepared statement.
  const existing =
    wanted.length === 0
      ? []
      : await tx
          .select({ key: planSources.canonicalKey })
          .from(planSources)
          .where(
            and(tenantPlan, sql`${planSources.canonicalKey} = any(${arrayParam(wanted)}::text[])`),
          );
  const known = new Set([...existing.map((row) => row.key), ...sources.map((s) => s.key)]);
  const { claims, errors } = keyClaims(claimsIn, known);
  if (errors.length > 0) refuse(`evidence.${errors.join("; evidence.")}.`);

  const existingKeys = new Set(existing.map((row) => row.key));
  const added = sources.filter((source) => !existingKeys.has(source.key));
  if (added.length > 0) {
    const [held] = await tx.select({ n: count() }).from(planSources).where(tenantPlan);
    if ((held?.n ?? 0) + added.length > MAX_PLAN_SOURCES) {
      refuse(
        `evidence: the plan would read ${(held?.n ?? 0) + added.length} sources, over the limit of ${MAX_PLAN_SOURCES}; record the sources the findings rest on, not every page visited.`,
      );
    }
  }
  await checkPlanTotal(tx, ctx, change.planId, added, claims);
  const rank = new Map(
    sources
      .map((source) => source.key)
      .sort()
      .map((key, i) => [key, i]),
  );
  if (sources.length > 0) {
    // A page read again keeps its first reading; a title, extract or digest it
    // lacked is filled in from this one.
    await tx
      .insert(planSources)
      .values(
        sources.map((source) => ({
          tenantId: ctx.tenantId,
          planId: change.planId,
          canonicalKey: source.key,
          kind: source.kind,
          href: source.href,
          title: source.title,
          extract: source.extract,
          contentDigest: source.contentDigest,
          firstStepId: change.stepId,
          // Those read together are a microsecond apart in key order: a page of
          // sources is read by (first read, id), and so lists them by key.
          firstReadAt: sql`${change.now}::timestamptz + ${rank.get(source.key) ?? 0}::int * interval '1 microsecond'`,
        })),
      )
      .onConflictDoUpdate({
        target: [planSources.planId, planSources.canonicalKey],
        set: {
          title: sql`coalesce(${planSources.title}, excluded.title)`,
          extract: sql`coalesce(${planSources.extract}, excluded.extract)`,
          contentDigest: sql`coalesce(${planSources.contentDigest}, excluded.content_digest)`,
        },
      });
  }

  if (claims.length > 0 && change.origin !== "artifact") {
    const stepId = change.stepId;
    const [held] = await tx
      .select({ n: count(), last: max(stepClaims.position) })
      .from(stepClaims)
      .where(and(eq(stepClaims.tenantId, ctx.tenantId), eq(stepClaims.planId, change.planId)));
    if ((held?.n ?? 0) + claims.length > MAX_PLAN_CLAIMS) {
      refuse(
        `evidence.claims: the plan would hold ${(held?.n ?? 0) + claims.length} claims, over the limit of ${MAX_PLAN_CLAIMS}; report the claims the findings rest on.`,
      );
    }
    const first = (held?.last ?? -1) + 1;
    await tx.insert(stepClaims).values(
      claims.map((claim, i) => ({
        tenantId: ctx.tenantId,
        planId: change.planId,
        stepId,
        position: first + i,
        text: claim.text,
        keyClaim: claim.key,
        supports: [...claim.supports],
        contradicts: [...claim.contradicts],
      })),
    );
  }

  const recorded = claims.map((claim) => ({ text: claim.text, status: claimStatus(claim) }));
  if (added.length > 0 || claims.length > 0) {
    await writeAuditLog(tx, ctx, {
      eventType: "evidence_recorded",
      planId: change.planId,
      stepId: change.stepId,
      payload: {
        origin: change.origin,
        stepOrder: change.stepOrder,
        newSources: added.map((source) => source.key),
        claims: claims.map((claim) => ({
          text: claim.text,
          status: claimStatus(claim),
          supports: claim.supports.map((c) => c.sourceKey),
          contradicts: claim.contradicts.map((c) => c.sourceKey),
        })),
        ...(change.origin === "artifact" ? { artifactId: change.artifactId } : {}),
      },
    });
  }
  return { sources: sources.length, newSources: added.length, claims: recorded };
}
