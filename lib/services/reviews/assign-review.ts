/**
 * Take, hand off or return a pending review (docs/reviews.md): the review is
 * assigned to one team member, or to nobody (the whole team). Assignment only
 * says who is asked; anyone in the team may still answer. Each change writes a
 * `user_reviewed` audit row with the action `review_assigned`; the change is
 * made through `changePendingReview`.
 */
import "server-only";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import { changePendingReview } from "./pending-review";

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
  return changePendingReview(ctx, input.reviewRequestId, async (tx, pending) => {
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
    const review = await pending.update({ assignedUserId: input.userId, assignedRole: null });
    await writeAuditLog(tx, ctx, {
      eventType: "user_reviewed",
      planId: pending.planId,
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
