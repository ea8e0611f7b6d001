/**
 * How many times one step may be put up for review (docs/reviews.md, "Limits").
 * Each request copies its summary, questions and proposal into the review and
 * the audit trail, and each `modify` appends the person's feedback to the
 * step's instructions; without a bound an agent looping on request and modify
 * grows both without end.
 */
import "server-only";
import { and, count, eq } from "drizzle-orm";
import type { Transaction } from "../../db/client";
import { reviewRequests } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";

/**
 * The most reviews one step may have, whatever their outcome; a checkpoint
 * where only people decide is not bounded (request-user-review.ts).
 */
export const MAX_REVIEWS_PER_STEP = 20;

/**
 * Refuses another review of a step that has had MAX_REVIEWS_PER_STEP. The
 * caller holds the step's row lock, so two requests cannot both pass the count.
 */
export async function checkReviewCount(
  tx: Transaction,
  step: { id: string; planId: string; stepOrder: number },
): Promise<void> {
  const [row] = await tx
    .select({ n: count() })
    .from(reviewRequests)
    .where(and(eq(reviewRequests.planId, step.planId), eq(reviewRequests.stepId, step.id)));
  const reviews = row?.n ?? 0;
  if (reviews >= MAX_REVIEWS_PER_STEP) {
    throw new AppError(
      "CONFLICT",
      `Step ${step.stepOrder} has been put up for review ${reviews} times, the most one step may be (${MAX_REVIEWS_PER_STEP}); nothing was changed. Finish it with submit_step_result, or end it with modify_plan (fail_step) and add a new step (add_steps) for the work the person still wants.`,
      { limit: MAX_REVIEWS_PER_STEP, reviews },
    );
  }
}
