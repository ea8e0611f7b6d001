/**
 * What an agent reads to resume or continue: get_research_context (the whole
 * plan, written down as a `session_resumed` audit event) and get_step_context
 * (the results before one step, plus the plan's artifacts); both with the
 * plan's evidence (docs/evidence.md). No answer grows with what a plan holds
 * (docs/execution-loop.md, "Reading a plan back"): steps, reviews and
 * artifacts come in pages within CONTEXT_PAGE_BYTES, every long value cut to
 * its first PREVIEW_CHARS characters and named in its `shortened`, and only the
 * newest deliverable is read, shortened too; read_evidence gives a value whole
 * (read-plan-text.ts). The plan page reads the whole core (loadPlanCore), the
 * deliverable shortened the same way, with short artifact summaries instead
 * (artifactSummaries), and pages its steps itself.
 */
import "server-only";
import { and, asc, count, desc, eq, getTableColumns, sql } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { selectRows } from "../../db/rows";
import {
  planBranchingConditions,
  researchArtifacts,
  researchFeedback,
  researchOutputs,
  reviewDecisions,
  reviewRequests,
  skillExecutions,
} from "../../db/schema";
import { computeProgress } from "../../plan-engine/progress";
import { SKILL_EXECUTION_STATUSES } from "../../plan-engine/skill-executions";
import { DECISION_CHANNELS } from "../../plan-engine/states";
import { isTerminalPlanStatus } from "../../plan-engine/transitions";
import { citationCheckOutput } from "../evidence/check-deliverable";
import {
  type EvidenceCursors,
  loadPlanEvidence,
  planEvidenceOutput,
} from "../evidence/read-evidence";
import { renewLease } from "../loop/leases";
import { type ForkLinks, forkLinksOutput, readForkLinks } from "../plans/fork-plan";
import { currentReviewDigest } from "../reviews/review-digest";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { planIdField, reviewRequestFields, sessionIdField, stepIdField } from "../shared/fields";
import {
  artifact,
  awaitingStepsOutput,
  pauseReasonOutput,
  planStatus,
  progress,
  stepDetail,
} from "../shared/output-fields";
import { cursorField, nextCursorField } from "../shared/pagination";
import {
  getPlan,
  getStep,
  loadStepSummaries,
  loadSteps,
  type PlanRow,
  type StepRow,
  stepNotFound,
} from "../shared/plan-access";
import { parseInput } from "../shared/validation";
import {
  loadArtifactPage,
  loadContextDeliverable,
  loadContextStep,
  loadPriorStepPage,
  loadReviewPage,
  loadStepPage,
  reviewRequestView,
} from "./context-pages";

const iso = (value: Date | null) => (value ? value.toISOString() : null);

function stepView(step: StepRow) {
  return {
    stepId: step.id,
    stepOrder: step.stepOrder,
    stepType: step.stepType,
    status: step.status,
    instructions: step.instructions,
    // Every writer stores an object here (submit_step_result's input, a server
    // step's answer); the column is typed as any JSON.
    result: (step.result ?? null) as Record<string, unknown> | null,
    resultSummary: step.resultSummary,
    confidence: step.confidence,
    stepExecutionReport: (step.stepExecutionReport ?? null) as Record<string, unknown> | null,
    outputFormattingNotes: step.outputFormattingNotes,
    failureReason: step.failureReason,
    startedAt: iso(step.startedAt),
    completedAt: iso(step.completedAt),
    /** A server-run step's tool and arguments (with their bindings); null for agent steps. */
    tool: step.tool,
    arguments: step.arguments,
    inputs: step.inputs,
    outputSchema: step.outputSchema,
    carriedFromStepId: step.carriedFromStepId,
  };
}

const artifactsOfPlan = (ctx: Pick<ServiceContext, "tenantId">, planId: string) =>
  and(eq(researchArtifacts.planId, planId), eq(researchArtifacts.tenantId, ctx.tenantId));

/** How many of a plan's artifacts get_research_context and get_step_context return unless asked otherwise, and at most. */
export const CONTEXT_ARTIFACTS_DEFAULT = 25;
export const CONTEXT_ARTIFACTS_MAX = 100;

/**
 * One page of a plan's artifacts, oldest first (loadArtifactPage), with the
 * total and the cursor of the next page (null on the last one).
 */
async function artifactPage(
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
  const where = artifactsOfPlan(ctx, planId);
  const [total] = await db.select({ n: count() }).from(researchArtifacts).where(where);
  const rows = await db
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
    .where(where)
    .orderBy(desc(researchArtifacts.createdAt), desc(researchArtifacts.id))
    .limit(cap);
  return {
    total: total?.n ?? 0,
    newest: rows.map(({ textLength, ...row }) => ({
      ...row,
      excerptTruncated: textLength > ARTIFACT_EXCERPT_CHARS,
      createdAt: row.createdAt.toISOString(),
    })),
  };
}

const artifactsCursorField = cursorField.describe(
  "The previous artifactsNextCursor; left out, the first page.",
);
const artifactsLimitField = z
  .number()
  .int()
  .min(0)
  .max(CONTEXT_ARTIFACTS_MAX)
  .default(CONTEXT_ARTIFACTS_DEFAULT)
  .describe(`Artifacts per page (0: only artifactsTotal).`);
// The tools' descriptions say how the lists page: no prose per field in tools/list.
const stepsCursorField = z.string().optional();

export const getResearchContextInput = z.object({
  planId: planIdField,
  sessionId: sessionIdField.optional().describe("Your session id, recorded as resuming the plan."),
  artifactsCursor: artifactsCursorField,
  artifactsLimit: artifactsLimitField,
  stepsCursor: stepsCursorField,
  reviewsCursor: z.string().optional(),
});

/** What a context says it shortened: the names of the values cut to PREVIEW_CHARS. */
const shortened = z.array(z.string());
const contextStep = stepDetail.extend({ shortened });
const contextArtifact = artifact.extend({ shortened });

/** get_research_context's answer (the MCP tool's output schema): what `loadPlanContext` reads. */
export const researchContextOutput = z.object({
  plan: z.object({
    planId: z.string(),
    name: z.string(),
    researchQuestion: z.string(),
    status: planStatus,
    planDesignRationale: z.string().nullable(),
    outputFormattingNotes: z.string().nullable(),
    sessionId: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    completedAt: z.string().nullable(),
    pauseReason: pauseReasonOutput.nullable(),
    awaitingSteps: awaitingStepsOutput.nullable(),
    ...forkLinksOutput.shape,
  }),
  progress,
  steps: z.array(contextStep),
  stepsNextCursor: z.string().nullable(),
  branchingConditions: z.array(
    z.object({
      conditionId: z.string(),
      afterStepId: z.string(),
      afterStepOrder: z.number().nullable(),
      conditionExpression: z.string(),
      ifTrueAction: z.string(),
      actionParams: z.record(z.string(), z.unknown()),
      evaluatedAt: z.string().nullable(),
      fired: z.boolean().nullable(),
    }),
  ),
  reviews: z.array(
    z.object({
      reviewRequestId: z.string(),
      stepId: z.string(),
      stepOrder: z.number().nullable(),
      status: z.string(),
      summary: z.string(),
      questions: z.array(z.string()),
      ...reviewRequestFields,
      assignedRole: z.string().nullable(),
      // What the agent asked the person to accept, and the digest of what the review shows.
      proposedResult: z.record(z.string(), z.unknown()).nullable(),
      proposedConfidence: z.number().nullable(),
      contentDigest: z.string(),
      // Pending only: the digest over the step's instructions as they are now
      // (differs from contentDigest when they were rewritten while it waited).
      currentDigest: z.string().nullable(),
      decision: z
        .object({
          decision: z.string(),
          feedback: z.string().nullable(),
          decidedBy: z.string(),
          decidedAt: z.string(),
          // web: a person in Cairn; relayed: an agent (decidedBy names its key or app); deadline: Cairn.
          channel: z.enum(DECISION_CHANNELS),
        })
        .nullable(),
      shortened,
    }),
  ),
  reviewsNextCursor: z.string().nullable(),
  skillExecution: z
    .object({
      executionId: z.string(),
      skillName: z.string(),
      status: z.enum(SKILL_EXECUTION_STATUSES),
      sessionId: z.string().nullable(),
      metadata: z.record(z.string(), z.unknown()),
      closedReason: z.string().nullable(),
      errorMessage: z.string().nullable(),
      createdAt: z.string(),
      completedAt: z.string().nullable(),
    })
    .nullable(),
  artifacts: z.array(contextArtifact),
  artifactsTotal: z.number().int(),
  /** Passed back as artifactsCursor for the next page; null on the last. */
  artifactsNextCursor: nextCursorField,
  deliverable: z
    .object({
      outputId: z.string(),
      outputMediaType: z.string(),
      content: z.string(),
      formattingNotes: z.string().nullable(),
      citationCheck: citationCheckOutput.nullable(),
      createdAt: z.string(),
      shortened,
    })
    .nullable(),
  evidence: planEvidenceOutput,
  feedback: z.array(
    z.object({
      feedbackId: z.string(),
      feedbackType: z.string(),
      satisfaction: z.number(),
      summary: z.string(),
      improvementSuggestions: z.string().nullable(),
      followUpRequested: z.boolean(),
      createdAt: z.string(),
    }),
  ),
});

export type PlanContext = z.infer<typeof researchContextOutput>;

/** A plan's newest deliverable (store_research_output), or null. */
export async function loadLatestDeliverable(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
) {
  const [output] = await db
    .select()
    .from(researchOutputs)
    .where(and(eq(researchOutputs.planId, planId), eq(researchOutputs.tenantId, ctx.tenantId)))
    .orderBy(desc(researchOutputs.createdAt), desc(researchOutputs.id))
    .limit(1);
  return output
    ? {
        outputId: output.id,
        outputMediaType: output.outputMediaType,
        content: output.content,
        formattingNotes: output.formattingNotes,
        citationCheck: output.citationCheck,
        createdAt: output.createdAt.toISOString(),
      }
    : null;
}

const planHeader = (plan: PlanRow, forks: ForkLinks) => ({
  planId: plan.id,
  name: plan.name,
  researchQuestion: plan.researchQuestion,
  status: plan.status,
  planDesignRationale: plan.planDesignRationale,
  outputFormattingNotes: plan.outputFormattingNotes,
  sessionId: plan.sessionId,
  createdAt: plan.createdAt.toISOString(),
  updatedAt: plan.updatedAt.toISOString(),
  completedAt: iso(plan.completedAt),
  pauseReason: plan.pauseReason,
  awaitingSteps: plan.awaitingSteps,
  ...forks,
});

/** The pending reviews' digests over their steps as they are now. */
const loadCurrentDigests = (db: Executor, planId: string) =>
  selectRows(
    db,
    z.object({ id: z.string(), digest: z.string() }),
    sql`select review.id, ${currentReviewDigest} as digest
      from review_request review join plan_step step on step.id = review.step_id
      where review.plan_id = ${planId}::uuid and review.status = 'pending'`,
  );

/** The plan's newest skill execution, or null. */
async function loadExecution(db: Executor, ctx: Pick<ServiceContext, "tenantId">, planId: string) {
  const [execution] = await db
    .select()
    .from(skillExecutions)
    .where(and(eq(skillExecutions.planId, planId), eq(skillExecutions.tenantId, ctx.tenantId)))
    .orderBy(desc(skillExecutions.createdAt))
    .limit(1);
  return execution
    ? {
        executionId: execution.id,
        skillName: execution.skillName,
        status: execution.status,
        sessionId: execution.sessionId,
        metadata: execution.metadata,
        closedReason: execution.closedReason,
        errorMessage: execution.errorMessage,
        createdAt: execution.createdAt.toISOString(),
        completedAt: iso(execution.completedAt),
      }
    : null;
}

/** The plan's feedback, oldest first: an initial and a closing one per research round. */
async function loadFeedback(db: Executor, ctx: Pick<ServiceContext, "tenantId">, planId: string) {
  const feedback = await db
    .select()
    .from(researchFeedback)
    .where(and(eq(researchFeedback.planId, planId), eq(researchFeedback.tenantId, ctx.tenantId)))
    .orderBy(asc(researchFeedback.createdAt));
  return feedback.map((f) => ({
    feedbackId: f.id,
    feedbackType: f.feedbackType,
    satisfaction: f.satisfaction,
    summary: f.summary,
    improvementSuggestions: f.improvementSuggestions,
    followUpRequested: f.followUpRequested,
    createdAt: f.createdAt.toISOString(),
  }));
}

/**
 * Everything recorded about a plan but its artifacts, whole, read inside the
 * caller's transaction: the newest deliverable only, never the earlier ones,
 * cut as the contexts cut it (loadContextDeliverable; the download has it whole).
 * What the web UI's plan page renders (it shows each long value shortened,
 * and pages its steps); the MCP answers read their bounded pages instead
 * (loadPlanContext).
 */
export async function loadPlanCore(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  /**
   * `pendingProposalsOnly`: the proposals of decided and withdrawn reviews are
   * left out (null). The plan page shows only the pending review's, and reads
   * the plan every few seconds: a step may have had 20 reviews of 128 KB each.
   */
  options: { pendingProposalsOnly?: boolean; evidence?: EvidenceCursors } = {},
) {
  const plan = await getPlan(db, ctx, planId);
  const steps = await loadSteps(db, ctx, plan.id);
  const orderOf = new Map(steps.map((s) => [s.id, s.stepOrder]));
  const conditions = await db
    .select()
    .from(planBranchingConditions)
    .where(
      and(
        eq(planBranchingConditions.planId, plan.id),
        eq(planBranchingConditions.tenantId, ctx.tenantId),
      ),
    )
    .orderBy(asc(planBranchingConditions.position));
  const reviews = await db
    .select({
      ...getTableColumns(reviewRequests),
      ...(options.pendingProposalsOnly
        ? {
            proposedResult: sql`case when ${reviewRequests.status} = 'pending'
              then ${reviewRequests.proposedResult} end`.mapWith(reviewRequests.proposedResult),
          }
        : {}),
    })
    .from(reviewRequests)
    .where(and(eq(reviewRequests.planId, plan.id), eq(reviewRequests.tenantId, ctx.tenantId)))
    .orderBy(asc(reviewRequests.createdAt));
  const decisions = await db
    .select()
    .from(reviewDecisions)
    .where(and(eq(reviewDecisions.planId, plan.id), eq(reviewDecisions.tenantId, ctx.tenantId)));
  const currentDigests = reviews.some((r) => r.status === "pending")
    ? await loadCurrentDigests(db, plan.id)
    : [];
  const deliverable = await loadContextDeliverable(db, ctx, plan.id);
  const evidence = await loadPlanEvidence(db, ctx, plan.id, options.evidence);
  return {
    plan: planHeader(plan, await readForkLinks(db, ctx, plan.id)),
    progress: computeProgress(steps.map((s) => s.status)),
    steps: steps.map(stepView),
    branchingConditions: conditions.map((c) => ({
      conditionId: c.id,
      afterStepId: c.afterStepId,
      afterStepOrder: orderOf.get(c.afterStepId) ?? null,
      conditionExpression: c.conditionExpression,
      ifTrueAction: c.ifTrueAction,
      actionParams: c.actionParams,
      evaluatedAt: iso(c.evaluatedAt),
      fired: c.fired,
    })),
    reviews: reviews.map((r) => {
      const decision = decisions.find((d) => d.reviewRequestId === r.id);
      return {
        reviewRequestId: r.id,
        stepId: r.stepId,
        stepOrder: orderOf.get(r.stepId) ?? null,
        status: r.status,
        summary: r.summary,
        ...reviewRequestView(r),
        proposedResult: r.proposedResult,
        proposedConfidence: r.proposedConfidence,
        contentDigest: r.contentDigest,
        currentDigest: currentDigests.find((d) => d.id === r.id)?.digest ?? null,
        decision: decision
          ? {
              decision: decision.decision,
              feedback: decision.feedback,
              decidedBy: decision.decidedByLabel,
              decidedAt: decision.createdAt.toISOString(),
              channel: decision.channel,
            }
          : null,
      };
    }),
    skillExecution: await loadExecution(db, ctx, plan.id),
    deliverable,
    evidence,
    feedback: await loadFeedback(db, ctx, plan.id),
  };
}

export type PlanCore = Awaited<ReturnType<typeof loadPlanCore>>;

/** Where a context's lists start, and how many artifacts it holds. */
export type ContextPages = {
  artifactsCursor?: string;
  artifactsLimit?: number;
  stepsCursor?: string;
  reviewsCursor?: string;
};

/**
 * What an agent reads to resume: the plan, a page of its steps (with the
 * conditions after them), of its reviews and of its artifacts (the first
 * CONTEXT_ARTIFACTS_DEFAULT unless asked otherwise), the newest deliverable
 * and a page of evidence; each page's next cursor to read on.
 */
export async function loadPlanContext(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  pages: ContextPages = {},
): Promise<PlanContext> {
  const plan = await getPlan(db, ctx, planId);
  const summaries = await loadStepSummaries(db, ctx, plan.id);
  const steps = await loadStepPage(db, ctx, plan.id, pages.stepsCursor);
  const reviews = await loadReviewPage(
    db,
    ctx,
    plan.id,
    pages.reviewsCursor,
    await loadCurrentDigests(db, plan.id),
  );
  return {
    plan: planHeader(plan, await readForkLinks(db, ctx, plan.id)),
    progress: computeProgress(summaries.map((s) => s.status)),
    ...steps,
    ...reviews,
    skillExecution: await loadExecution(db, ctx, plan.id),
    ...(await artifactPage(db, ctx, plan.id, {
      cursor: pages.artifactsCursor,
      limit: pages.artifactsLimit ?? CONTEXT_ARTIFACTS_DEFAULT,
    })),
    deliverable: await loadContextDeliverable(db, ctx, plan.id),
    evidence: await loadPlanEvidence(db, ctx, plan.id),
    feedback: await loadFeedback(db, ctx, plan.id),
  };
}

/** get_research_context: the plan's whole context, recording that a session resumed it. */
export async function getResearchContext(
  ctx: ServiceContext,
  raw: z.input<typeof getResearchContextInput>,
): Promise<PlanContext> {
  const input = parseInput(getResearchContextInput, raw);
  return ctx.db.transaction(async (tx) => {
    const context = await loadPlanContext(tx, ctx, input.planId, input);
    await writeAuditLog(tx, ctx, {
      eventType: "session_resumed",
      planId: context.plan.planId,
      payload: { sessionId: input.sessionId ?? null },
    });
    return context;
  });
}

export const readPlanContextInput = z.object({ planId: planIdField });

/**
 * The same context without the `session_resumed` record: what a client that
 * browses MCP resources reads (`cairn://plans/{planId}`). Browsing is not
 * resuming; get_research_context is, and records it.
 */
export async function readPlanContext(
  ctx: ServiceContext,
  raw: z.input<typeof readPlanContextInput>,
): Promise<PlanContext> {
  const input = parseInput(readPlanContextInput, raw);
  return ctx.db.transaction((tx) => loadPlanContext(tx, ctx, input.planId));
}

export const getStepContextInput = z.object({
  planId: planIdField,
  stepId: stepIdField,
  artifactsCursor: artifactsCursorField,
  artifactsLimit: artifactsLimitField,
  stepsCursor: stepsCursorField,
});

/** get_step_context's answer (the MCP tool's output schema). */
export const stepContextOutput = z.object({
  planId: z.string(),
  researchQuestion: z.string(),
  step: contextStep,
  leaseExpiresAt: z.string().nullable(),
  priorSteps: z.array(contextStep),
  stepsNextCursor: z.string().nullable(),
  evidence: planEvidenceOutput,
  artifacts: z.array(contextArtifact),
  artifactsTotal: z.number().int(),
  /** Passed back as artifactsCursor for the next page; null on the last. */
  artifactsNextCursor: nextCursorField,
});

export type StepContext = z.infer<typeof stepContextOutput>;

export async function getStepContext(
  ctx: ServiceContext,
  raw: z.input<typeof getStepContextInput>,
): Promise<StepContext> {
  const input = parseInput(getStepContextInput, raw);
  return ctx.db.transaction(async (tx) => {
    const plan = await getPlan(tx, ctx, input.planId);
    const step = await getStep(tx, ctx, plan.id, input.stepId);
    // An ended plan (a cancelled one above all) holds no step: nothing to renew.
    const leaseExpiresAt = isTerminalPlanStatus(plan.status)
      ? null
      : await renewLease(tx, ctx, plan.id, step.id);
    const view = await loadContextStep(tx, ctx, plan.id, step.id);
    if (!view) throw stepNotFound(plan.id, step.id);
    return {
      planId: plan.id,
      researchQuestion: plan.researchQuestion,
      step: view,
      /** The step's lease, renewed by this call; null when the step is not in progress. */
      leaseExpiresAt,
      ...(await loadPriorStepPage(tx, ctx, plan.id, step.stepOrder, input.stepsCursor)),
      evidence: await loadPlanEvidence(tx, ctx, plan.id),
      ...(await artifactPage(tx, ctx, plan.id, {
        cursor: input.artifactsCursor,
        limit: input.artifactsLimit,
      })),
    };
  });
}
