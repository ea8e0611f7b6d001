/**
 * A plan's artifacts as its readers list them: the contexts' pages with their
 * total (get_research_context, get_step_context), and the plan page's newest
 * few by title and excerpt.
 */
import "server-only";
import { and, count, desc, eq, sql } from "drizzle-orm";
import type { Executor } from "../../db/client";
import { researchArtifacts } from "../../db/schema";
import type { ServiceContext } from "../shared/context";
import { loadArtifactPage } from "./context-pages";

const artifactsOfPlan = (ctx: Pick<ServiceContext, "tenantId">, planId: string) =>
  and(eq(researchArtifacts.planId, planId), eq(researchArtifacts.tenantId, ctx.tenantId));

/** How many of a plan's artifacts get_research_context and get_step_context return unless asked otherwise, and at most. */
export const CONTEXT_ARTIFACTS_DEFAULT = 25;
export const CONTEXT_ARTIFACTS_MAX = 100;

/**
 * One page of a plan's artifacts, oldest first (loadArtifactPage), with the
 * total and the cursor of the next page (null on the last one).
 */
export async function artifactPage(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  page: { cursor: string | undefined; limit: number },
) {
  const [total] = await db
    .select({ n: count() })
    .from(researchArtifacts)
    .where(artifactsOfPlan(ctx, planId));
  const { artifacts, artifactsNextCursor } = await loadArtifactPage(db, ctx, planId, page);
  return { artifacts, artifactsTotal: total?.n ?? 0, artifactsNextCursor };
}

/** Characters of an artifact's text that the plan page shows. */
export const ARTIFACT_EXCERPT_CHARS = 240;

/**
 * The plan page's view of its artifacts: the newest few by title, type and a
 * short excerpt (never their full content), and how many there are in all.
 */
export async function artifactSummaries(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  cap: number,
) {
  const [total] = await db
    .select({ n: count() })
    .from(researchArtifacts)
    .where(artifactsOfPlan(ctx, planId));
  const rows = await newestArtifactsQuery(db, ctx, planId, cap);
  return {
    total: total?.n ?? 0,
    newest: rows.map(({ textLength, ...row }) => ({
      ...row,
      excerptTruncated: textLength > ARTIFACT_EXCERPT_CHARS,
      createdAt: row.createdAt.toISOString(),
    })),
  };
}

/**
 * The read of a plan's `cap` newest artifacts: the end of the plan's index
 * (`research_artifact_plan_idx`, by plan, time and id), read backward, so the
 * plan page reads those rows, not all of the plan's to sort them.
 */
export const newestArtifactsQuery = (
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  cap: number,
) =>
  db
    .select({
      artifactId: researchArtifacts.id,
      stepId: researchArtifacts.stepId,
      artifactType: researchArtifacts.artifactType,
      title: researchArtifacts.title,
      confidence: researchArtifacts.confidence,
      createdAt: researchArtifacts.createdAt,
      excerpt: sql<string>`left(${researchArtifacts.contentText}, ${ARTIFACT_EXCERPT_CHARS})`,
      textLength: sql<number>`char_length(${researchArtifacts.contentText})::int`,
    })
    .from(researchArtifacts)
    .where(artifactsOfPlan(ctx, planId))
    .orderBy(desc(researchArtifacts.createdAt), desc(researchArtifacts.id))
    .limit(cap);
