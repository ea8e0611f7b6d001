/**
 * What an agent reads to resume or continue: get_research_context (the whole
 * plan, written down as a `session_resumed` audit event) and get_step_context
 * (the results before one step, plus the plan's artifacts).
 */
import { and, asc, desc, eq, lt } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "../db/client";
import {
  planBranchingConditions,
  planSteps,
  researchArtifacts,
  researchFeedback,
  researchOutputs,
  reviewDecisions,
  reviewRequests,
  skillExecutions,
} from "../db/schema";
import { computeProgress } from "../plan-engine/progress";
import { writeAuditLog } from "./audit";
import type { ServiceContext } from "./context";
import { planIdField, sessionIdField, stepIdField } from "./fields";
import { getPlan, getStep, loadSteps, renewLease, type StepRow } from "./plan-access";
import { parseInput } from "./validation";

const iso = (value: Date | null) => (value ? value.toISOString() : null);

function stepView(step: StepRow) {
  return {
    stepId: step.id,
    stepOrder: step.stepOrder,
    stepType: step.stepType,
    status: step.status,
    instructions: step.instructions,
    result: step.result ?? null,
    resultSummary: step.resultSummary,
    confidence: step.confidence,
    stepExecutionReport: step.stepExecutionReport ?? null,
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

async function artifactsOf(db: Executor, ctx: Pick<ServiceContext, "tenantId">, planId: string) {
  const rows = await db
    .select()
    .from(researchArtifacts)
    .where(and(eq(researchArtifacts.planId, planId), eq(researchArtifacts.tenantId, ctx.tenantId)))
    .orderBy(asc(researchArtifacts.createdAt));
  return rows.map((a) => ({
    artifactId: a.id,
    stepId: a.stepId,
    artifactType: a.artifactType,
    title: a.title,
    content: a.content,
    contentText: a.contentText,
    confidence: a.confidence,
    sourceUrls: a.sourceUrls,
    createdAt: a.createdAt.toISOString(),
  }));
}

export const getResearchContextInput = z.object({
  planId: planIdField,
  sessionId: sessionIdField
    .optional()
    .describe("Your current session id; recorded as the session that resumed the plan."),
});

/**
 * Everything recorded about a plan, read inside the caller's transaction: what
 * get_research_context returns to an agent, the plan resource shows, and the web
 * UI's plan page renders.
 */
export async function loadPlanContext(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
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
    .select()
    .from(reviewRequests)
    .where(and(eq(reviewRequests.planId, plan.id), eq(reviewRequests.tenantId, ctx.tenantId)))
    .orderBy(asc(reviewRequests.createdAt));
  const decisions = await db
    .select()
    .from(reviewDecisions)
    .where(and(eq(reviewDecisions.planId, plan.id), eq(reviewDecisions.tenantId, ctx.tenantId)));
  const [execution] = await db
    .select()
    .from(skillExecutions)
    .where(and(eq(skillExecutions.planId, plan.id), eq(skillExecutions.tenantId, ctx.tenantId)))
    .orderBy(desc(skillExecutions.createdAt))
    .limit(1);
  const outputs = await db
    .select()
    .from(researchOutputs)
    .where(and(eq(researchOutputs.planId, plan.id), eq(researchOutputs.tenantId, ctx.tenantId)))
    .orderBy(desc(researchOutputs.createdAt));
  const feedback = await db
    .select()
    .from(researchFeedback)
    .where(and(eq(researchFeedback.planId, plan.id), eq(researchFeedback.tenantId, ctx.tenantId)))
    .orderBy(asc(researchFeedback.createdAt));
  const artifacts = await artifactsOf(db, ctx, plan.id);

  const latestOutput = outputs[0];
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
        decision: decision
          ? {
              decision: decision.decision,
              feedback: decision.feedback,
              decidedBy: decision.decidedByLabel,
              decidedAt: decision.createdAt.toISOString(),
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
    artifacts,
    deliverable: latestOutput
      ? {
          outputId: latestOutput.id,
          outputMediaType: latestOutput.outputMediaType,
          content: latestOutput.content,
          formattingNotes: latestOutput.formattingNotes,
          createdAt: latestOutput.createdAt.toISOString(),
        }
      : null,
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

export type PlanContext = Awaited<ReturnType<typeof loadPlanContext>>;

/** get_research_context: the plan's whole context, recording that a session resumed it. */
export async function getResearchContext(
  ctx: ServiceContext,
  raw: z.input<typeof getResearchContextInput>,
): Promise<PlanContext> {
  const input = parseInput(getResearchContextInput, raw);
  return ctx.db.transaction(async (tx) => {
    const context = await loadPlanContext(tx, ctx, input.planId);
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

export const getStepContextInput = z.object({ planId: planIdField, stepId: stepIdField });

export async function getStepContext(
  ctx: ServiceContext,
  raw: z.input<typeof getStepContextInput>,
) {
  const input = parseInput(getStepContextInput, raw);
  return ctx.db.transaction(async (tx) => {
    const plan = await getPlan(tx, ctx, input.planId);
    const step = await getStep(tx, ctx, plan.id, input.stepId);
    const leaseExpiresAt = await renewLease(tx, ctx, step.id);
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
      leaseExpiresAt: leaseExpiresAt?.toISOString() ?? null,
      priorSteps: prior.map(stepView),
      artifacts: await artifactsOf(tx, ctx, plan.id),
    };
  });
}

export type StepContext = Awaited<ReturnType<typeof getStepContext>>;
