/**
 * The parts of a plan that the plan page and the contexts read alike: its
 * header, the pending reviews' current digests, its newest skill execution
 * and its feedback.
 */
import "server-only";
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { selectRows } from "../../db/rows";
import { researchFeedback, skillExecutions } from "../../db/schema";
import type { ForkLinks } from "../plans/fork-links";
import { currentReviewDigest } from "../reviews/review-digest";
import type { ServiceContext } from "../shared/context";
import type { PlanRow } from "../shared/plan-access";

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export const planHeader = (plan: PlanRow, forks: ForkLinks) => ({
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
export const loadCurrentDigests = (db: Executor, planId: string) =>
  selectRows(
    db,
    z.object({ id: z.string(), digest: z.string() }),
    sql`select review.id, ${currentReviewDigest} as digest
      from review_request review join plan_step step on step.id = review.step_id
      where review.plan_id = ${planId}::uuid and review.status = 'pending'`,
  );

/** The plan's newest skill execution, or null. */
export async function loadExecution(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
) {
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
export async function loadFeedback(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
) {
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
