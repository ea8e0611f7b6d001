/**
 * What an agent reads to resume or continue: get_research_context (the whole
 * plan, written down as a `session_resumed` audit event; step-context.ts has
 * get_step_context); both with the plan's evidence (docs/evidence.md). No
 * answer grows with what a plan holds (docs/execution-loop.md, "Reading a plan
 * back"): steps, reviews and artifacts come in pages within CONTEXT_PAGE_BYTES,
 * every long value cut to its first PREVIEW_CHARS characters and named in its
 * `shortened`, and only the newest deliverable is read, shortened too;
 * read_evidence gives a value whole (read-plan-text.ts).
 */
import "server-only";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { computeProgress } from "../../plan-engine/progress";
import { SKILL_EXECUTION_STATUSES } from "../../plan-engine/skill-executions";
import { citationCheckOutput } from "../evidence/check-deliverable";
import { loadPlanEvidence, planEvidenceOutput } from "../evidence/read-evidence";
import { forkLinksOutput, readForkLinks } from "../plans/fork-links";
import { reviewRecord } from "../reviews/review-view";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { planIdField, sessionIdField } from "../shared/fields";
import {
  artifact,
  awaitingStepsOutput,
  pauseReasonOutput,
  planStatus,
  progress,
  stepDetail,
} from "../shared/output-fields";
import { cursorField, nextCursorField } from "../shared/pagination";
import { getPlan, loadStepSummaries } from "../shared/plan-access";
import { parseInput } from "../shared/validation";
import { loadContextDeliverable, loadReviewPage, loadStepPage } from "./context-pages";
import { artifactPage, CONTEXT_ARTIFACTS_DEFAULT, CONTEXT_ARTIFACTS_MAX } from "./plan-artifacts";
import { loadCurrentDigests, loadExecution, loadFeedback, planHeader } from "./plan-parts";

export const artifactsCursorField = cursorField.describe(
  "The previous artifactsNextCursor; left out, the first page.",
);
export const artifactsLimitField = z
  .number()
  .int()
  .min(0)
  .max(CONTEXT_ARTIFACTS_MAX)
  .default(CONTEXT_ARTIFACTS_DEFAULT)
  .describe(`Artifacts per page (0: only artifactsTotal).`);
// The tools' descriptions say how the lists page: no prose per field in tools/list.
export const stepsCursorField = z.string().optional();

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
export const contextStep = stepDetail.extend({ shortened });
export const contextArtifact = artifact.extend({ shortened });

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
  reviews: z.array(reviewRecord),
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
