/**
 * What an agent reads to resume or continue: get_research_context (the whole
 * plan, written down as a `session_resumed` audit event) and get_step_context
 * (the results before one step, plus the plan's artifacts); both with the
 * plan's evidence (docs/evidence.md). Artifacts come in
 * pages (artifactsCursor, artifactsLimit), and only the newest deliverable is
 * read: neither grows with how much a plan has stored. The plan page reads the
 * same core with short artifact summaries instead (artifactSummaries).
 */
import "server-only";
import { and, asc, count, desc, eq, getTableColumns, lt, sql } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { selectRows } from "../../db/rows";
import {
  planBranchingConditions,
  planSteps,
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
import { cursorField, keyset, nextCursorField, readPage } from "../shared/pagination";
import { getPlan, getStep, loadSteps, type StepRow } from "../shared/plan-access";
import { parseInput } from "../shared/validation";

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
  };
}

function artifactView(a: typeof researchArtifacts.$inferSelect) {
  return {
    artifactId: a.id,
    stepId: a.stepId,
    artifactType: a.artifactType,
    title: a.title,
    // store_research takes an object, the only writer of artifacts.
    content: a.content as Record<string, unknown>,
    contentText: a.contentText,
    confidence: a.confidence,
    sourceUrls: a.sourceUrls,
    createdAt: a.createdAt.toISOString(),
  };
}

const artifactsOfPlan = (ctx: Pick<ServiceContext, "tenantId">, planId: string) =>
  and(eq(researchArtifacts.planId, planId), eq(researchArtifacts.tenantId, ctx.tenantId));

/** How many of a plan's artifacts get_research_context and get_step_context return in full unless asked otherwise, and at most. */
export const CONTEXT_ARTIFACTS_DEFAULT = 25;
export const CONTEXT_ARTIFACTS_MAX = 100;

/**
 * One page of a plan's artifacts in full, oldest first, with the total and the
 * cursor of the next page (null on the last one).
 */
async function artifactPage(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  { cursor, limit }: { cursor: string | undefined; limit: number },
) {
  const where = artifactsOfPlan(ctx, planId);
  const page = keyset(
    { at: researchArtifacts.createdAt, id: researchArtifacts.id, direction: "asc" },
    cursor,
    "artifactsCursor",
  );
  const [total] = await db.select({ n: count() }).from(researchArtifacts).where(where);
  const { items, nextCursor } = await readPage(db, researchArtifacts, where, page, limit);
  return {
    artifacts: items.map(artifactView),
    artifactsTotal: total?.n ?? 0,
    artifactsNextCursor: nextCursor,
  };
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

export const getResearchContextInput = z.object({
  planId: planIdField,
  sessionId: sessionIdField.optional().describe("Your session id, recorded as resuming the plan."),
  artifactsCursor: artifactsCursorField,
  artifactsLimit: artifactsLimitField,
});

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
  }),
  progress,
  steps: z.array(stepDetail),
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
    }),
  ),
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
  artifacts: z.array(artifact),
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

/**
 * Everything recorded about a plan but its artifacts, read inside the caller's
 * transaction: the newest deliverable only (the one shown and returned), never
 * the earlier ones. What get_research_context and the plan resource return, and
 * the web UI's plan page renders, each with its own view of the artifacts.
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
    ? await selectRows(
        db,
        z.object({ id: z.string(), digest: z.string() }),
        sql`select review.id, ${currentReviewDigest} as digest
          from review_request review join plan_step step on step.id = review.step_id
          where review.plan_id = ${plan.id}::uuid and review.status = 'pending'`,
      )
    : [];
  const [execution] = await db
    .select()
    .from(skillExecutions)
    .where(and(eq(skillExecutions.planId, plan.id), eq(skillExecutions.tenantId, ctx.tenantId)))
    .orderBy(desc(skillExecutions.createdAt))
    .limit(1);
  const deliverable = await loadLatestDeliverable(db, ctx, plan.id);
  const evidence = await loadPlanEvidence(db, ctx, plan.id, options.evidence);
  const feedback = await db
    .select()
    .from(researchFeedback)
    .where(and(eq(researchFeedback.planId, plan.id), eq(researchFeedback.tenantId, ctx.tenantId)))
    .orderBy(asc(researchFeedback.createdAt));
  return {
    plan: {
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
    },
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
        questions: r.questions,
        requestedBy: r.requestedByLabel,
        requestedAt: r.createdAt.toISOString(),
        dueAt: iso(r.dueAt),
        onTimeout: r.onTimeout,
        escalatedAt: iso(r.escalatedAt),
        assignedUserId: r.assignedUserId,
        assignedRole: r.assignedRole,
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
    skillExecution: execution
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
      : null,
    deliverable,
    evidence,
    feedback: feedback.map((f) => ({
      feedbackId: f.id,
      feedbackType: f.feedbackType,
      satisfaction: f.satisfaction,
      summary: f.summary,
      improvementSuggestions: f.improvementSuggestions,
      followUpRequested: f.followUpRequested,
      createdAt: f.createdAt.toISOString(),
    })),
  };
}

export type PlanCore = Awaited<ReturnType<typeof loadPlanCore>>;

/**
 * What an agent reads to resume: the plan's core and one page of its artifacts
 * in full (the first CONTEXT_ARTIFACTS_DEFAULT unless asked otherwise), with
 * artifactsTotal, and artifactsNextCursor to read the rest.
 */
export async function loadPlanContext(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  page: { cursor?: string; limit?: number } = {},
): Promise<PlanContext> {
  const core = await loadPlanCore(db, ctx, planId);
  const artifacts = await artifactPage(db, ctx, core.plan.planId, {
    cursor: page.cursor,
    limit: page.limit ?? CONTEXT_ARTIFACTS_DEFAULT,
  });
  const { deliverable, evidence, feedback, ...rest } = core;
  return { ...rest, ...artifacts, deliverable, evidence, feedback };
}

/** get_research_context: the plan's whole context, recording that a session resumed it. */
export async function getResearchContext(
  ctx: ServiceContext,
  raw: z.input<typeof getResearchContextInput>,
): Promise<PlanContext> {
  const input = parseInput(getResearchContextInput, raw);
  return ctx.db.transaction(async (tx) => {
    const context = await loadPlanContext(tx, ctx, input.planId, {
      cursor: input.artifactsCursor,
      limit: input.artifactsLimit,
    });
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
});

/** get_step_context's answer (the MCP tool's output schema). */
export const stepContextOutput = z.object({
  planId: z.string(),
  researchQuestion: z.string(),
  step: stepDetail,
  leaseExpiresAt: z.string().nullable(),
  priorSteps: z.array(stepDetail),
  evidence: planEvidenceOutput,
  artifacts: z.array(artifact),
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
    const prior = await tx
      .select()
      .from(planSteps)
      .where(
        and(
          eq(planSteps.planId, plan.id),
          eq(planSteps.tenantId, ctx.tenantId),
          lt(planSteps.stepOrder, step.stepOrder),
        ),
      )
      .orderBy(asc(planSteps.stepOrder));
    return {
      planId: plan.id,
      researchQuestion: plan.researchQuestion,
      step: stepView(step),
      /** The step's lease, renewed by this call; null when the step is not in progress. */
      leaseExpiresAt,
      priorSteps: prior.map(stepView),
      evidence: await loadPlanEvidence(tx, ctx, plan.id),
      ...(await artifactPage(tx, ctx, plan.id, {
        cursor: input.artifactsCursor,
        limit: input.artifactsLimit,
      })),
    };
  });
}
