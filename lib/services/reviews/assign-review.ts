/**
 * Take, hand off or return a pending review (docs/reviews.md): the review is
 * assigned to one team member, or to nobody (the whole team). Assignment only
 * says who is asked; anyone in the team may still answer. Each change writes a
 * `user_reviewed` audit row with the action `review_assigned`; the change is
 * made through `changePendingReview`. Handing a review to a colleague (someone
 * other than the one acting) may carry a note; the colleague is notified
 * (`review.handed_over`, docs/reviews.md "Hand-over").
 */
import "server-only";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { sameTenant } from "../../db/same-tenant";
import { users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { queueEvent } from "../notifications/events";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import { changePendingReview } from "./pending-review";

export const assignReviewInput = z.object({
  reviewRequestId: z.uuid("must be a review id (a UUID)"),
  /** The team member who should answer; null returns the review to the whole team. */
  userId: z.uuid("must be a user id (a UUID)").nullable(),
  /** A hand-over's note to the colleague: what to look at, why them. */
  note: z.string().trim().max(2_000).optional(),
});

export type ReviewAssigned = {
  reviewRequestId: string;
  assignedUserId: string | null;
  assignedUserEmail: string | null;
  /** Handed to a colleague (not taken, not returned to the team): they were notified. */
  handedOver: boolean;
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
            sameTenant(users.tenantId, ctx.tenantId),
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
    const note = input.note && input.note.length > 0 ? input.note : null;
    const handedOver = input.userId !== null && input.userId !== ctx.actor.id;
    if (note !== null && !handedOver) {
      throw new AppError(
        "VALIDATION_ERROR",
        "A note goes with a hand-over to a colleague: choose who should answer the review. Nothing was changed.",
        { field: "note" },
      );
    }
    const review = await pending.update({
      assignedUserId: input.userId,
      assignedRole: null,
      assignedUserIds: null,
    });
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
        ...(handedOver ? { handedOver: true, note } : {}),
      },
    });
    if (handedOver) {
      await queueEvent(tx, ctx.tenantId, "review.handed_over", input.reviewRequestId, {
        handedOverBy: ctx.actor.label,
        note,
      });
    }
    return {
      reviewRequestId: input.reviewRequestId,
      assignedUserId: input.userId,
      assignedUserEmail: email,
      handedOver,
    };
  });
}
