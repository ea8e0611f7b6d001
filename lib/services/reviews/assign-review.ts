/**
 * Take, hand off or return a pending review (docs/reviews.md): the review is
 * assigned to one team member, or to nobody (the whole team). Assignment only
 * says who is asked; anyone in the team may still answer. Each change writes a
 * `user_reviewed` audit row with the action `review_assigned`.
 */
import "server-only";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { reviewRequests, users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { lockPlan } from "../shared/plan-access";
import { parseInput } from "../shared/validation";

export const assignReviewInput = z.object({
  reviewRequestId: z.uuid("must be a review id (a UUID)"),
  /** The team member who should answer; null returns the review to the whole team. */
  userId: z.uuid("must be a user id (a UUID)").nullable(),
});

export type ReviewAssigned = {
  reviewRequestId: string;
  assignedUserId: string | null;
  assignedUserEmail: string | null;
};

export async function assignReview(
  ctx: ServiceContext,
  raw: z.input<typeof assignReviewInput>,
): Promise<ReviewAssigned> {
  const input = parseInput(assignReviewInput, raw);
  const [found] = await ctx.db
    .select({ planId: reviewRequests.planId })
    .from(reviewRequests)
    .where(
      and(eq(reviewRequests.id, input.reviewRequestId), eq(reviewRequests.tenantId, ctx.tenantId)),
    );
  if (!found) {
    throw new AppError("NOT_FOUND", `No review ${input.reviewRequestId} exists for this team.`, {
      reviewRequestId: input.reviewRequestId,
    });
  }
  return ctx.db.transaction(async (tx) => {
    // The plan first, the lock order of every decision, so a decision and a
    // hand-off of the same review queue up rather than deadlock.
    await lockPlan(tx, ctx, found.planId);
    let email: string | null = null;
    if (input.userId !== null) {
      const [user] = await tx
        .select({ email: users.email })
        .from(users)
        .where(
          and(
            eq(users.id, input.userId),
            eq(users.tenantId, ctx.tenantId),
            sql`${users.disabledAt} is null`,
          ),
        );
      if (!user) {
        throw new AppError(
          "VALIDATION_ERROR",
          "That person is not an active member of this team: choose someone from the list.",
          { field: "userId" },
        );
      }
      email = user.email;
    }
    const [review] = await tx
      .update(reviewRequests)
      .set({ assignedUserId: input.userId, assignedRole: null })
      .where(
        and(eq(reviewRequests.id, input.reviewRequestId), eq(reviewRequests.status, "pending")),
      )
      .returning({ stepId: reviewRequests.stepId });
    if (!review) {
      throw new AppError(
        "CONFLICT",
        "The review was already answered (or withdrawn); nothing was changed. Reload to see its current state.",
        { reviewRequestId: input.reviewRequestId },
      );
    }
    await writeAuditLog(tx, ctx, {
      eventType: "user_reviewed",
      planId: found.planId,
      stepId: review.stepId,
      payload: {
        action: "review_assigned",
        reviewRequestId: input.reviewRequestId,
        assignedUserId: input.userId,
        assignedUserEmail: email,
        assignedRole: null,
      },
    });
    return {
      reviewRequestId: input.reviewRequestId,
      assignedUserId: input.userId,
      assignedUserEmail: email,
    };
  });
}
