/**
 * A plan's evidence as the readers take it (docs/evidence.md): its sources and
 * every step's claims with their citations resolved to the sources' links and
 * titles. get_research_context, get_step_context, the plan and review pages
 * and the JSON export read it through here.
 */
import "server-only";
import { and, asc, eq } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { type ClaimCitation, planSources, planSteps, stepClaims } from "../../db/schema";
import { CLAIM_STATUSES, claimStatus } from "../../plan-engine/evidence";
import type { ServiceContext } from "../shared/context";

const citationOutput = z.object({
  sourceKey: z.string(),
  href: z.string(),
  title: z.string().nullable(),
  quote: z.string().nullable(),
  locator: z.string().nullable(),
});

export const planEvidenceOutput = z
  .object({
    sources: z.array(
      z.object({
        sourceKey: z
          .string()
          .describe("The canonical URL, doi:… or arxiv:… the spellings merge under."),
        kind: z.enum(["url", "doi", "arxiv"]),
        href: z.string(),
        title: z.string().nullable(),
        extract: z.string().nullable(),
        contentDigest: z.string().nullable(),
        firstStepId: z.string().nullable(),
        firstStepOrder: z.number().nullable(),
        firstReadAt: z.string(),
      }),
    ),
    claims: z.array(
      z.object({
        claimId: z.string(),
        stepId: z.string(),
        stepOrder: z.number(),
        text: z.string(),
        key: z.boolean(),
        status: z.enum(CLAIM_STATUSES),
        supports: z.array(citationOutput),
        contradicts: z.array(citationOutput),
      }),
    ),
  })
  .describe(
    "The plan's sources (one per page, DOI or arXiv paper) and its steps' claims in step order, each unsupported, contested or supported.",
  );

export type PlanEvidence = z.infer<typeof planEvidenceOutput>;
export type EvidenceClaim = PlanEvidence["claims"][number];

export async function loadPlanEvidence(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
): Promise<PlanEvidence> {
  const sourceRows = await db
    .select({ source: planSources, firstStepOrder: planSteps.stepOrder })
    .from(planSources)
    .leftJoin(planSteps, eq(planSteps.id, planSources.firstStepId))
    .where(and(eq(planSources.tenantId, ctx.tenantId), eq(planSources.planId, planId)))
    .orderBy(asc(planSources.firstReadAt), asc(planSources.canonicalKey));
  const claimRows = await db
    .select({ claim: stepClaims, stepOrder: planSteps.stepOrder })
    .from(stepClaims)
    .innerJoin(planSteps, eq(planSteps.id, stepClaims.stepId))
    .where(and(eq(stepClaims.tenantId, ctx.tenantId), eq(stepClaims.planId, planId)))
    .orderBy(asc(planSteps.stepOrder), asc(stepClaims.position));
  const byKey = new Map(sourceRows.map(({ source }) => [source.canonicalKey, source]));
  const resolve = (citations: ClaimCitation[]) =>
    citations.map((citation) => {
      const source = byKey.get(citation.sourceKey);
      return {
        sourceKey: citation.sourceKey,
        href: source?.href ?? citation.sourceKey,
        title: source?.title ?? null,
        quote: citation.quote,
        locator: citation.locator,
      };
    });
  return {
    sources: sourceRows.map(({ source, firstStepOrder }) => ({
      sourceKey: source.canonicalKey,
      kind: source.kind,
      href: source.href,
      title: source.title,
      extract: source.extract,
      contentDigest: source.contentDigest,
      firstStepId: source.firstStepId,
      firstStepOrder,
      firstReadAt: source.firstReadAt.toISOString(),
    })),
    claims: claimRows.map(({ claim, stepOrder }) => ({
      claimId: claim.id,
      stepId: claim.stepId,
      stepOrder,
      text: claim.text,
      key: claim.keyClaim,
      status: claimStatus(claim),
      supports: resolve(claim.supports),
      contradicts: resolve(claim.contradicts),
    })),
  };
}
