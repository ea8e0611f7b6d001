/**
 * The contexts' bounded lists (docs/execution-loop.md, "Reading a plan back"):
 * a page of steps (with the conditions after them), of reviews and of
 * artifacts, each within CONTEXT_PAGE_BYTES of JSON text, every long value cut
 * in the database (lib/services/shared/bounded.ts) and named in its `shortened`.
 */
import "server-only";
import { and, eq, lt, type SQL, sql } from "drizzle-orm";
import type { Executor } from "../../db/client";
import {
  planBranchingConditions,
  planSteps,
  researchArtifacts,
  researchOutputs,
  reviewDecisions,
  reviewRequests,
} from "../../db/schema";
import { arrayParam } from "../../db/statement";
import { reviewRecordColumns, reviewRecordOf } from "../reviews/review-view";
import { cutColumns, shortenedOf } from "../shared/bounded";
import type { ServiceContext } from "../shared/context";
import { keyset } from "../shared/pagination";

/** The most JSON text of one page of a context's steps, of its reviews, of its artifacts. */
export const CONTEXT_PAGE_BYTES = 64 * 1024;
/** The most rows one page reads, before its size is counted. */
const PAGE_ROWS = 50;
/**
 * How much of the step get_step_context is asked about it shows of what the
 * step asks for: instructions as long as their limit, inputs, arguments and
 * outputSchema (their limits are in bytes) mostly whole.
 */
const TASK_CHARS = 20_000;

type Tenant = Pick<ServiceContext, "tenantId">;

/** The values of a step a context may shorten, and so what read_evidence reads whole. */
const STEP_PARTS = [
  "instructions",
  "result",
  "resultSummary",
  "stepExecutionReport",
  "outputFormattingNotes",
  "failureReason",
  "arguments",
  "inputs",
  "outputSchema",
] as const;
const ARTIFACT_PARTS = ["content", "contentText"] as const;
const DELIVERABLE_PARTS = ["content", "formattingNotes"] as const;

export const stepColumns = {
  instructions: planSteps.instructions,
  result: planSteps.result,
  resultSummary: planSteps.resultSummary,
  stepExecutionReport: planSteps.stepExecutionReport,
  outputFormattingNotes: planSteps.outputFormattingNotes,
  failureReason: planSteps.failureReason,
  arguments: planSteps.arguments,
  inputs: planSteps.inputs,
  outputSchema: planSteps.outputSchema,
};
export const artifactColumns = {
  content: researchArtifacts.content,
  contentText: researchArtifacts.contentText,
};
export const deliverableColumns = {
  content: researchOutputs.content,
  formattingNotes: researchOutputs.formattingNotes,
};

const iso = (value: Date | null) => (value ? value.toISOString() : null);
type JsonObject = Record<string, unknown>;

/** The two lists of steps: get_research_context's, and get_step_context's before its step. */
const PLAN_STEPS = { list: "plan steps" };
const PRIOR_STEPS = { list: "prior steps" };

type Keyset = ReturnType<typeof keyset>;

const stepOrder = ({ list }: { list: string }, cursor: string | undefined) =>
  keyset(
    { list, at: planSteps.stepOrder, sequence: true, id: planSteps.id, direction: "asc" },
    cursor,
    "stepsCursor",
  );

/** Steps as a context shows them, in order, each long value cut (to `chars` where given). */
async function selectSteps(
  db: Executor,
  where: SQL | undefined,
  page: Keyset,
  chars: Partial<Record<(typeof STEP_PARTS)[number], number>> = {},
) {
  const rows = await db
    .select({
      id: planSteps.id,
      stepOrder: planSteps.stepOrder,
      stepType: planSteps.stepType,
      status: planSteps.status,
      confidence: planSteps.confidence,
      startedAt: planSteps.startedAt,
      completedAt: planSteps.completedAt,
      tool: planSteps.tool,
      carriedFromStepId: planSteps.carriedFromStepId,
      ...cutColumns(stepColumns, chars),
      ...page.position,
    })
    .from(planSteps)
    .where(and(where, page.where))
    .orderBy(...page.orderBy)
    .limit(PAGE_ROWS + 1);
  return rows.map((row) => ({
    positionAt: row.positionAt,
    positionId: row.positionId,
    view: {
      stepId: row.id,
      stepOrder: row.stepOrder,
      stepType: row.stepType,
      status: row.status,
      instructions: row.instructions as string,
      // Every writer stores an object here (submit_step_result's input, a server
      // step's answer); the column is typed as any JSON.
      result: row.result as JsonObject | null,
      resultSummary: row.resultSummary as string | null,
      confidence: row.confidence,
      stepExecutionReport: row.stepExecutionReport as JsonObject | null,
      outputFormattingNotes: row.outputFormattingNotes as string | null,
      failureReason: row.failureReason as string | null,
      startedAt: iso(row.startedAt),
      completedAt: iso(row.completedAt),
      /** A server-run step's tool and arguments (with their bindings); null for agent steps. */
      tool: row.tool,
      arguments: row.arguments as JsonObject | null,
      inputs: row.inputs as JsonObject | null,
      outputSchema: row.outputSchema as JsonObject | null,
      carriedFromStepId: row.carriedFromStepId,
      shortened: shortenedOf(row, STEP_PARTS),
    },
  }));
}

const stepsOfPlan = (ctx: Tenant, planId: string) =>
  and(eq(planSteps.planId, planId), eq(planSteps.tenantId, ctx.tenantId));

/** One step as get_step_context shows the step it is asked about: what it asks for longer. */
export async function loadContextStep(db: Executor, ctx: Tenant, planId: string, stepId: string) {
  const [step] = await selectSteps(
    db,
    and(stepsOfPlan(ctx, planId), eq(planSteps.id, stepId)),
    stepOrder(PLAN_STEPS, undefined),
    {
      instructions: TASK_CHARS,
      arguments: TASK_CHARS,
      inputs: TASK_CHARS,
      outputSchema: TASK_CHARS,
    },
  );
  return step?.view;
}

export type ContextStep = NonNullable<Awaited<ReturnType<typeof loadContextStep>>>;

/** A row's place in its list, and what a context shows of it. */
type Entry<View> = { positionAt: string; positionId: string; view: View };

/** The first entries (at most `limit`) whose views fit in CONTEXT_PAGE_BYTES, and the cursor after them. */
function fitViews<View>(page: Keyset, entries: Entry<View>[], limit = PAGE_ROWS) {
  const { items, nextCursor } = page.fitOf(entries, limit, CONTEXT_PAGE_BYTES, (e) => e.view);
  return { views: items.map((e) => e.view), nextCursor };
}

/**
 * get_research_context's page of steps from `cursor`, with the branching
 * conditions after them (counted in the page's size: up to 200 of 4 KB each
 * may follow one step).
 */
export async function loadStepPage(
  db: Executor,
  ctx: Tenant,
  planId: string,
  cursor: string | undefined,
) {
  const page = stepOrder(PLAN_STEPS, cursor);
  const steps = await selectSteps(db, stepsOfPlan(ctx, planId), page);
  const ids = steps.map(({ view }) => view.stepId);
  const conditions =
    ids.length === 0
      ? []
      : await db
          .select()
          .from(planBranchingConditions)
          .where(
            and(
              eq(planBranchingConditions.tenantId, ctx.tenantId),
              sql`${planBranchingConditions.afterStepId} = any(${arrayParam(ids)}::uuid[])`,
            ),
          )
          .orderBy(planBranchingConditions.position);
  const entries = steps.map(({ view, ...position }) => ({
    ...position,
    view: {
      step: view,
      conditions: conditions
        .filter((c) => c.afterStepId === view.stepId)
        .map((c) => ({
          conditionId: c.id,
          afterStepId: c.afterStepId,
          afterStepOrder: view.stepOrder,
          conditionExpression: c.conditionExpression,
          ifTrueAction: c.ifTrueAction,
          actionParams: c.actionParams,
          evaluatedAt: iso(c.evaluatedAt),
          fired: c.fired,
        })),
    },
  }));
  const { views: shown, nextCursor } = fitViews(page, entries);
  return {
    steps: shown.map((s) => s.step),
    branchingConditions: shown.flatMap((s) => s.conditions),
    stepsNextCursor: nextCursor,
  };
}

/** get_step_context's page of the steps before `before` (a stepOrder), from `cursor`. */
export async function loadPriorStepPage(
  db: Executor,
  ctx: Tenant,
  planId: string,
  before: number,
  cursor: string | undefined,
) {
  const page = stepOrder(PRIOR_STEPS, cursor);
  const steps = await selectSteps(
    db,
    and(stepsOfPlan(ctx, planId), lt(planSteps.stepOrder, before)),
    page,
  );
  const { views, nextCursor } = fitViews(page, steps);
  return { priorSteps: views, stepsNextCursor: nextCursor };
}

/**
 * A page of a plan's reviews, oldest first, each with its decision; the
 * summary, proposal and feedback cut. `currentDigests`: the pending reviews'
 * digests over their steps as they are now.
 */
export async function loadReviewPage(
  db: Executor,
  ctx: Tenant,
  planId: string,
  cursor: string | undefined,
  currentDigests: { id: string; digest: string }[],
) {
  const page = keyset(
    { list: "plan reviews", at: reviewRequests.createdAt, id: reviewRequests.id, direction: "asc" },
    cursor,
    "reviewsCursor",
  );
  const rows = await db
    .select({ ...reviewRecordColumns, ...page.position })
    .from(reviewRequests)
    .leftJoin(planSteps, eq(planSteps.id, reviewRequests.stepId))
    .leftJoin(reviewDecisions, eq(reviewDecisions.reviewRequestId, reviewRequests.id))
    .where(
      and(eq(reviewRequests.planId, planId), eq(reviewRequests.tenantId, ctx.tenantId), page.where),
    )
    .orderBy(...page.orderBy)
    .limit(PAGE_ROWS + 1);
  const entries = rows.map((r) => ({
    positionAt: r.positionAt,
    positionId: r.positionId,
    view: reviewRecordOf(r, currentDigests.find((d) => d.id === r.id)?.digest ?? null),
  }));
  const { views: reviews, nextCursor } = fitViews(page, entries);
  return { reviews, reviewsNextCursor: nextCursor };
}

/** A plan's artifacts oldest first, from `cursor` (refused when it is not one). */
export const artifactsOrder = (cursor: string | undefined) =>
  keyset(
    {
      list: "plan artifacts",
      at: researchArtifacts.createdAt,
      id: researchArtifacts.id,
      direction: "asc",
    },
    cursor,
    "artifactsCursor",
  );

/**
 * The read of a page of a plan's artifacts, oldest first: a range of the
 * plan's index (`research_artifact_plan_idx`, by plan, time and id) from the
 * cursor on, so a page reads its rows, not all of the plan's to sort them.
 */
export const artifactPageQuery = (
  db: Executor,
  ctx: Tenant,
  planId: string,
  page: Keyset,
  rows: number,
) =>
  db
    .select({
      id: researchArtifacts.id,
      stepId: researchArtifacts.stepId,
      artifactType: researchArtifacts.artifactType,
      title: researchArtifacts.title,
      confidence: researchArtifacts.confidence,
      sourceUrls: researchArtifacts.sourceUrls,
      createdAt: researchArtifacts.createdAt,
      ...cutColumns(artifactColumns),
      ...page.position,
    })
    .from(researchArtifacts)
    .where(
      and(
        eq(researchArtifacts.planId, planId),
        eq(researchArtifacts.tenantId, ctx.tenantId),
        page.where,
      ),
    )
    .orderBy(...page.orderBy)
    .limit(rows);

/**
 * A page of a plan's artifacts, oldest first: at most `limit`, within
 * CONTEXT_PAGE_BYTES, content and contentText cut.
 */
export async function loadArtifactPage(
  db: Executor,
  ctx: Tenant,
  planId: string,
  { cursor, limit }: { cursor: string | undefined; limit: number },
) {
  const page = artifactsOrder(cursor);
  const rows = await artifactPageQuery(db, ctx, planId, page, Math.min(limit, PAGE_ROWS) + 1);
  const entries = rows.map((a) => ({
    positionAt: a.positionAt,
    positionId: a.positionId,
    view: {
      artifactId: a.id,
      stepId: a.stepId,
      artifactType: a.artifactType,
      title: a.title,
      // store_research takes an object, the only writer of artifacts.
      content: a.content as JsonObject,
      contentText: a.contentText as string,
      confidence: a.confidence,
      sourceUrls: a.sourceUrls,
      createdAt: a.createdAt.toISOString(),
      shortened: shortenedOf(a, ARTIFACT_PARTS),
    },
  }));
  const { views: artifacts, nextCursor } = fitViews(page, entries, Math.min(limit, PAGE_ROWS));
  return { artifacts, artifactsNextCursor: nextCursor };
}

/** A plan's newest deliverable as a context shows it (content and notes cut), or null. */
export async function loadContextDeliverable(db: Executor, ctx: Tenant, planId: string) {
  const [output] = await db
    .select({
      outputId: researchOutputs.id,
      outputMediaType: researchOutputs.outputMediaType,
      citationCheck: researchOutputs.citationCheck,
      createdAt: researchOutputs.createdAt,
      ...cutColumns(deliverableColumns),
    })
    .from(researchOutputs)
    .where(and(eq(researchOutputs.planId, planId), eq(researchOutputs.tenantId, ctx.tenantId)))
    .orderBy(sql`${researchOutputs.createdAt} desc`, sql`${researchOutputs.id} desc`)
    .limit(1);
  return output
    ? {
        outputId: output.outputId,
        outputMediaType: output.outputMediaType,
        content: output.content as string,
        formattingNotes: output.formattingNotes as string | null,
        citationCheck: output.citationCheck,
        createdAt: output.createdAt.toISOString(),
        shortened: shortenedOf(output, DELIVERABLE_PARTS),
      }
    : null;
}
