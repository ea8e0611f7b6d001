/**
 * Read models for the research library and the admin's view of skill runs:
 * recent artifacts, one artifact with its provenance, and how the research skill
 * routed and how satisfied people were. Reads only, scoped to the tenant; the
 * search itself is search_sources' own use case.
 */
import "server-only";
import { and, asc, count, desc, eq, type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { sameTenant } from "../../db/same-tenant";
import {
  planSteps,
  researchArtifacts,
  researchFeedback,
  researchPlans,
  skillExecutions,
} from "../../db/schema";
import { artifactTypeField } from "../research/store-research";
import type { ServiceContext } from "../shared/context";
import { cursorField, keyset } from "../shared/pagination";
import { parseInput } from "../shared/validation";
import { shortenedRow, shortenedSql } from "./full-values";

export const ARTIFACT_PAGE_SIZE = 20;

export const listArtifactsInput = z.object({
  artifactType: artifactTypeField.optional(),
  cursor: cursorField,
});

/** The library without a query: newest artifacts first. */
export async function listArtifacts(ctx: ServiceContext, raw: z.input<typeof listArtifactsInput>) {
  const input = parseInput(listArtifactsInput, raw);
  const where = and(
    eq(researchArtifacts.tenantId, ctx.tenantId),
    input.artifactType ? eq(researchArtifacts.artifactType, input.artifactType) : undefined,
  );
  const page = keyset(
    { list: "library", at: researchArtifacts.createdAt, id: researchArtifacts.id },
    input.cursor,
  );
  const [total] = await ctx.db.select({ n: count() }).from(researchArtifacts).where(where);
  const rows = await ctx.db
    .select({
      ...page.position,
      artifactId: researchArtifacts.id,
      title: researchArtifacts.title,
      artifactType: researchArtifacts.artifactType,
      confidence: researchArtifacts.confidence,
      createdAt: researchArtifacts.createdAt,
      planId: researchArtifacts.planId,
      researchQuestion: researchPlans.researchQuestion,
      excerpt: sql<string>`left(${researchArtifacts.contentText}, 240)`,
    })
    .from(researchArtifacts)
    .leftJoin(researchPlans, eq(researchPlans.id, researchArtifacts.planId))
    .where(and(where, page.where))
    .orderBy(...page.orderBy)
    .limit(ARTIFACT_PAGE_SIZE + 1);
  const { items, nextCursor } = page.pageOf(rows, ARTIFACT_PAGE_SIZE);
  return {
    cursor: input.cursor ?? null,
    nextCursor,
    total: total?.n ?? 0,
    artifacts: items.map(({ positionAt, positionId, ...row }) => ({
      ...row,
      createdAt: row.createdAt.toISOString(),
    })),
  };
}

/** The artifact types in the tenant's library, for the type filter. */
export async function listArtifactTypes(ctx: ServiceContext): Promise<string[]> {
  const types = await ctx.db
    .selectDistinct({ artifactType: researchArtifacts.artifactType })
    .from(researchArtifacts)
    .where(eq(researchArtifacts.tenantId, ctx.tenantId))
    .orderBy(researchArtifacts.artifactType);
  return types.map((t) => t.artifactType);
}

/**
 * One artifact with where it came from: its plan, research question and step;
 * its text and its content (as indented JSON) shortened in the database, each
 * whole behind a link (`readArtifactPart`): an artifact may hold 200,000
 * characters of text and as much again of content.
 */
export async function getArtifact(ctx: ServiceContext, artifactId: string) {
  if (!z.uuid().safeParse(artifactId).success) return undefined;
  const [row] = await ctx.db
    .select({
      artifact: {
        id: researchArtifacts.id,
        title: researchArtifacts.title,
        artifactType: researchArtifacts.artifactType,
        confidence: researchArtifacts.confidence,
        sourceUrls: researchArtifacts.sourceUrls,
        createdAt: researchArtifacts.createdAt,
        planId: researchArtifacts.planId,
        stepId: researchArtifacts.stepId,
      },
      contentText: shortenedSql(sql`${researchArtifacts.contentText}`).mapWith(parseShortened),
      content: shortenedSql(sql`jsonb_pretty(${researchArtifacts.content})`).mapWith(
        parseShortened,
      ),
      planName: researchPlans.name,
      researchQuestion: researchPlans.researchQuestion,
      stepOrder: planSteps.stepOrder,
      stepType: planSteps.stepType,
    })
    .from(researchArtifacts)
    .leftJoin(researchPlans, eq(researchPlans.id, researchArtifacts.planId))
    .leftJoin(planSteps, eq(planSteps.id, researchArtifacts.stepId))
    .where(
      and(
        eq(researchArtifacts.id, artifactId),
        sameTenant(researchArtifacts.tenantId, ctx.tenantId),
      ),
    );
  if (!row) return undefined;
  const { artifact } = row;
  return {
    artifactId: artifact.id,
    title: artifact.title,
    artifactType: artifact.artifactType,
    content: row.content,
    contentText: row.contentText,
    confidence: artifact.confidence,
    sourceUrls: artifact.sourceUrls,
    createdAt: artifact.createdAt.toISOString(),
    plan: artifact.planId
      ? { planId: artifact.planId, name: row.planName, researchQuestion: row.researchQuestion }
      : null,
    step:
      artifact.stepId && row.stepOrder !== null
        ? { stepId: artifact.stepId, stepOrder: row.stepOrder, stepType: row.stepType }
        : null,
  };
}

/** A `Shortened` as the database sends it: JSON text (postgres.js) or an object (PGlite). */
const parseShortened = (value: unknown) =>
  shortenedRow.parse(typeof value === "string" ? JSON.parse(value) : value);

/** Which part of an artifact is read whole: its text, or its content. */
export const artifactPartInput = z.object({ part: z.enum(["contentText", "content"]) });
export type ArtifactPart = z.output<typeof artifactPartInput>;

/** One artifact's text or content (indented JSON) whole; undefined when it is not the tenant's. */
export async function readArtifactPart(
  ctx: ServiceContext,
  artifactId: string,
  { part }: ArtifactPart,
): Promise<string | undefined> {
  if (!z.uuid().safeParse(artifactId).success) return undefined;
  const [row] = await ctx.db
    .select({
      value:
        part === "contentText"
          ? sql<string>`${researchArtifacts.contentText}`
          : sql<string>`jsonb_pretty(${researchArtifacts.content})`,
    })
    .from(researchArtifacts)
    .where(
      and(
        eq(researchArtifacts.id, artifactId),
        sameTenant(researchArtifacts.tenantId, ctx.tenantId),
      ),
    );
  return row?.value;
}

/**
 * How much of each text of a run the skills page shows, cut in the database
 * with "…" after it: 50 runs of a 5,000-character rationale and error would
 * be megabytes of the page.
 */
const RUN_TEXT_CHARS = 300;

/** A text cut to RUN_TEXT_CHARS characters, "…" marking the cut; null stays null. */
const cut = (value: SQL) =>
  sql<string | null>`case when char_length(${value}) > ${sql.raw(String(RUN_TEXT_CHARS))}
    then left(${value}, ${sql.raw(String(RUN_TEXT_CHARS))}) || '…' else ${value} end`;

/** A run's metadata text (as metadataText reads it: strings only), cut. */
const metadataCut = (key: string) =>
  cut(sql`case when jsonb_typeof(${skillExecutions.metadata} -> ${key}::text) = 'string'
    then ${skillExecutions.metadata} ->> ${key}::text end`);

/**
 * How the research skill has been used: scan vs deep routing, the runs with
 * their rationale (each text cut, RUN_TEXT_CHARS), and satisfaction from
 * feedback over time (daily averages).
 */
export async function skillExecutionOverview(ctx: ServiceContext) {
  const mode = sql<string>`coalesce(${skillExecutions.metadata}->>'delegatedTo', 'unrouted')`;
  const routing = await ctx.db
    .select({ mode, status: skillExecutions.status, n: sql<number>`count(*)::int` })
    .from(skillExecutions)
    .where(eq(skillExecutions.tenantId, ctx.tenantId))
    .groupBy(mode, skillExecutions.status);
  const recent = await ctx.db
    .select({
      executionId: skillExecutions.id,
      skillName: skillExecutions.skillName,
      status: skillExecutions.status,
      topic: metadataCut("topic"),
      researchType: metadataCut("researchType"),
      delegatedTo: metadataCut("delegatedTo"),
      routingRationale: metadataCut("routingRationale"),
      closedReason: cut(sql`${skillExecutions.closedReason}`),
      errorMessage: cut(sql`${skillExecutions.errorMessage}`),
      planId: skillExecutions.planId,
      planName: researchPlans.name,
      createdAt: skillExecutions.createdAt,
    })
    .from(skillExecutions)
    .leftJoin(researchPlans, eq(researchPlans.id, skillExecutions.planId))
    .where(eq(skillExecutions.tenantId, ctx.tenantId))
    .orderBy(desc(skillExecutions.createdAt))
    .limit(50);
  const day = sql<string>`to_char(date_trunc('day', ${researchFeedback.createdAt} at time zone 'UTC'), 'YYYY-MM-DD')`;
  const satisfaction = await ctx.db
    .select({
      day,
      average: sql<number>`avg(${researchFeedback.satisfaction})::float8`,
      responses: sql<number>`count(*)::int`,
    })
    .from(researchFeedback)
    .where(eq(researchFeedback.tenantId, ctx.tenantId))
    .groupBy(day)
    .orderBy(asc(day))
    .limit(366);
  return {
    routing: {
      scan: routing.filter((r) => r.mode === "scan").reduce((sum, r) => sum + r.n, 0),
      deep: routing.filter((r) => r.mode === "deep").reduce((sum, r) => sum + r.n, 0),
      unrouted: routing
        .filter((r) => r.mode !== "scan" && r.mode !== "deep")
        .reduce((sum, r) => sum + r.n, 0),
      byStatus: routing,
    },
    recent: recent.map((run) => ({
      executionId: run.executionId,
      skillName: run.skillName,
      status: run.status,
      topic: run.topic,
      researchType: run.researchType,
      delegatedTo: run.delegatedTo,
      routingRationale: run.routingRationale,
      closedReason: run.closedReason,
      errorMessage: run.errorMessage,
      planId: run.planId,
      planName: run.planName,
      createdAt: run.createdAt.toISOString(),
    })),
    satisfaction: satisfaction.map((point) => ({ ...point, average: Number(point.average) })),
  };
}
