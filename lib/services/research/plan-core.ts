/** Everything recorded about a plan but its artifacts, for the plan page (loadPlanCore). */
import "server-only";
import { and, asc, eq, getTableColumns, sql } from "drizzle-orm";
import type { Executor } from "../../db/client";
import { planBranchingConditions, reviewDecisions, reviewRequests } from "../../db/schema";
import { computeProgress } from "../../plan-engine/progress";
import { type EvidenceCursors, loadPlanEvidence } from "../evidence/read-evidence";
import { readForkLinks } from "../plans/fork-plan";
import type { ServiceContext } from "../shared/context";
import { getPlan, loadSteps, type StepRow } from "../shared/plan-access";
import { loadContextDeliverable, reviewRequestView } from "./context-pages";
import { loadCurrentDigests, loadExecution, loadFeedback, planHeader } from "./plan-parts";

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
