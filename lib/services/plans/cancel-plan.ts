/**
 * cancel_plan, and the Cancel buttons of the plan page, the plan list and the
 * Stalled page: ends an unfinished plan with a reason (docs/state-machines.md,
 * "Cancel"). The engine decides (`decideCancel`); this locks the plan, reads
 * its steps and pending reviews, and writes the plan, the withdrawn reviews,
 * the ended leases, the audit rows and plan.cancelled in one transaction.
 */
import "server-only";
import { eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { researchPlans, reviewRequests } from "../../db/schema";
import { decideCancel } from "../../plan-engine/cancel";
import { endLeases } from "../loop/leases";
import { queueEvent } from "../notifications/events";
import { pendingReviewsOf } from "../reviews/pending-review";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { planIdField } from "../shared/fields";
import { planStatus } from "../shared/output-fields";
import { loadStepSummaries, lockPlan, setPlanStatusAndQueueEvent } from "../shared/plan-access";
import { parseInput } from "../shared/validation";

export const cancelPlanInput = z.object({
  planId: planIdField,
  reason: z
    .string()
    .trim()
    .min(1, "say why the plan is cancelled")
    .max(2_000)
    .describe("Why; recorded, and repeated to every later call."),
});

export type CancelPlanInput = z.input<typeof cancelPlanInput>;

/** The answer (the MCP tool's output schema). */
export const planCancelledOutput = z.object({
  planId: z.string(),
  planStatus,
  cancelledBy: z.string(),
  reason: z.string(),
  cancelledAt: z.string(),
  withdrawnReviewIds: z.array(z.string()),
  releasedStepIds: z.array(z.string()),
});

export type PlanCancelled = z.infer<typeof planCancelledOutput>;

export async function cancelPlan(
  ctx: ServiceContext,
  raw: CancelPlanInput,
): Promise<PlanCancelled> {
  const input = parseInput(cancelPlanInput, raw);
  return ctx.db.transaction(async (tx) => {
    const plan = await lockPlan(tx, ctx, input.planId);
    const [steps, pendingReviews] = await Promise.all([
      loadStepSummaries(tx, ctx, plan.id),
      tx
        .select({ id: reviewRequests.id, stepId: reviewRequests.stepId })
        .from(reviewRequests)
        .where(pendingReviewsOf(plan.id, ctx.tenantId)),
    ]);
    const now = new Date();
    const decided = decideCancel(
      { id: plan.id, status: plan.status, steps, pendingReviews },
      { reason: input.reason, by: ctx.actor.label, at: now },
    );
    const status = await setPlanStatusAndQueueEvent(tx, plan, decided.planStatus, now);
    await tx
      .update(researchPlans)
      .set({ cancellation: decided.cancellation, awaitingSteps: null, pauseReason: null })
      .where(eq(researchPlans.id, plan.id));
    await endLeases(tx, decided.releasedStepIds, now);
    if (decided.withdrawnReviewIds.length > 0) {
      await tx
        .update(reviewRequests)
        .set({ status: "withdrawn", decidedAt: now })
        .where(inArray(reviewRequests.id, decided.withdrawnReviewIds));
    }
    await writeAuditLog(tx, ctx, decided.audit);
    await queueEvent(tx, ctx.tenantId, "plan.cancelled", plan.id, {
      cancelledBy: decided.cancellation.by,
      reason: decided.cancellation.reason,
    });
    return {
      planId: plan.id,
      planStatus: status,
      cancelledBy: decided.cancellation.by,
      reason: decided.cancellation.reason,
      cancelledAt: decided.cancellation.at,
      withdrawnReviewIds: decided.withdrawnReviewIds,
      releasedStepIds: decided.releasedStepIds,
    };
  });
}
