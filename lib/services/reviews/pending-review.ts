/**
 * The one way to change a pending review besides deciding it (docs/reviews.md):
 * another team's or an unknown review is NOT_FOUND, the plan is locked first
 * (the lock order of every decision, so a decision and a change of the same
 * review queue up rather than deadlock), and the update applies only while
 * the review is pending, else CONFLICT.
 */
import "server-only";
import { and, eq, type SQL } from "drizzle-orm";
import type { Transaction } from "../../db/client";
import { sameTenant } from "../../db/same-tenant";
import { reviewRequests } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import type { ServiceContext } from "../shared/context";
import { lockPlan } from "../shared/plan-access";

type ReviewChange = Partial<Omit<typeof reviewRequests.$inferInsert, "id" | "tenantId">>;

/** The where of a plan's reviews still waiting for a person, in the caller's tenant. */
export function pendingReviewsOf(planId: string, tenantId: string): SQL | undefined {
  return and(
    eq(reviewRequests.planId, planId),
    eq(reviewRequests.tenantId, tenantId),
    eq(reviewRequests.status, "pending"),
  );
}

export type PendingReview = {
  planId: string;
  /** Writes `set` if the review is still pending (CONFLICT otherwise); its step's id. */
  update(set: ReviewChange): Promise<{ stepId: string }>;
  /** For a change kept beside the review (a snooze): its step's id if it is still pending, else CONFLICT. */
  stillPending(): Promise<{ stepId: string }>;
};

export async function changePendingReview<T>(
  ctx: ServiceContext,
  reviewRequestId: string,
  change: (tx: Transaction, review: PendingReview) => Promise<T>,
): Promise<T> {
  const [found] = await ctx.db
    .select({ planId: reviewRequests.planId })
    .from(reviewRequests)
    .where(
      and(
        eq(reviewRequests.id, reviewRequestId),
        sameTenant(reviewRequests.tenantId, ctx.tenantId),
      ),
    );
  if (!found) {
    throw new AppError("NOT_FOUND", `No review ${reviewRequestId} exists for this team.`, {
      reviewRequestId,
    });
  }
  const isPending = and(
    eq(reviewRequests.id, reviewRequestId),
    eq(reviewRequests.status, "pending"),
  );
  const pendingOrConflict = (review: { stepId: string } | undefined) => {
    if (!review) {
      throw new AppError(
        "CONFLICT",
        "The review was already answered (or withdrawn); nothing was changed. Reload to see its current state.",
        { reviewRequestId },
      );
    }
    return review;
  };
  return ctx.db.transaction(async (tx) => {
    await lockPlan(tx, ctx, found.planId);
    return change(tx, {
      planId: found.planId,
      async update(set) {
        const [review] = await tx
          .update(reviewRequests)
          .set(set)
          .where(isPending)
          .returning({ stepId: reviewRequests.stepId });
        return pendingOrConflict(review);
      },
      async stillPending() {
        // The plan's lock, taken above by every decision first, keeps it pending until commit.
        const [review] = await tx
          .select({ stepId: reviewRequests.stepId })
          .from(reviewRequests)
          .where(isPending);
        return pendingOrConflict(review);
      },
    });
  });
}
