/**
 * Snooze a pending review out of one's own inbox until a time, or un-snooze it
 * early (docs/reviews.md, "Snooze"). Only the person acting is affected: the
 * review stays pending and in everyone else's inbox. Each is a `user_reviewed`
 * row on the plan's trail, made through `changePendingReview` (another team's
 * review is NOT_FOUND, one no longer pending is CONFLICT). The scheduler
 * brings a snooze back when its time comes (snooze-returns.ts).
 */
import "server-only";
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import { reviewSnoozes } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { SNOOZE_CHOICES, snoozeUntil, TIME_ZONE_MAX_CHARS } from "../../plan-engine/review-snooze";
import { writeAuditLog } from "../shared/audit";
import { actingUserId, type ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import { changePendingReview } from "./pending-review";

const reviewRequestId = z.uuid("must be a review id (a UUID)");

export const snoozeReviewInput = z.object({
  reviewRequestId,
  /** In an hour, tomorrow morning (09:00 in `timeZone`), or `at` a chosen time. */
  until: z.enum(SNOOZE_CHOICES),
  /** For `at`: the local date and time, as a datetime-local field sends it. */
  at: z.string().trim().max(19).optional(),
  /** The reviewer's IANA time zone (their browser's), in which tomorrow and `at` are read. */
  timeZone: z.string().trim().max(TIME_ZONE_MAX_CHARS),
});

export const unsnoozeReviewInput = z.object({ reviewRequestId });

export type ReviewSnoozed = { reviewRequestId: string; until: string };

export async function snoozeReview(
  ctx: ServiceContext,
  raw: z.input<typeof snoozeReviewInput>,
): Promise<ReviewSnoozed> {
  const input = parseInput(snoozeReviewInput, raw);
  const userId = actingUserId(ctx);
  // Decided before any transaction: a bad time changes nothing.
  const until = snoozeUntil(input, Date.now());
  return changePendingReview(ctx, input.reviewRequestId, async (tx, pending) => {
    const { stepId } = await pending.stillPending();
    const snooze = { until, timeZone: input.timeZone, returnedAt: null, createdAt: new Date() };
    // One snooze per review and person: a new one replaces theirs, ended or not.
    await tx
      .insert(reviewSnoozes)
      .values({
        tenantId: ctx.tenantId,
        reviewRequestId: input.reviewRequestId,
        planId: pending.planId,
        userId,
        ...snooze,
      })
      .onConflictDoUpdate({
        target: [reviewSnoozes.reviewRequestId, reviewSnoozes.userId],
        set: snooze,
      });
    await writeAuditLog(tx, ctx, {
      eventType: "user_reviewed",
      planId: pending.planId,
      stepId,
      payload: {
        action: "review_snoozed",
        reviewRequestId: input.reviewRequestId,
        until: until.toISOString(),
        timeZone: input.timeZone,
      },
    });
    return { reviewRequestId: input.reviewRequestId, until: until.toISOString() };
  });
}

/** Back in the acting person's inbox now; CONFLICT when they have no running snooze of it. */
export async function unsnoozeReview(
  ctx: ServiceContext,
  raw: z.input<typeof unsnoozeReviewInput>,
): Promise<{ reviewRequestId: string }> {
  const input = parseInput(unsnoozeReviewInput, raw);
  const userId = actingUserId(ctx);
  return changePendingReview(ctx, input.reviewRequestId, async (tx, pending) => {
    const { stepId } = await pending.stillPending();
    const [ended] = await tx
      .update(reviewSnoozes)
      .set({ returnedAt: sql`now()` })
      .where(
        and(
          eq(reviewSnoozes.reviewRequestId, input.reviewRequestId),
          eq(reviewSnoozes.userId, userId),
          eq(reviewSnoozes.tenantId, ctx.tenantId),
          isNull(reviewSnoozes.returnedAt),
          gt(reviewSnoozes.until, sql`now()`),
        ),
      )
      .returning({ until: reviewSnoozes.until });
    if (!ended) {
      throw new AppError(
        "CONFLICT",
        "You have not snoozed this review, or it is already back in your inbox; nothing was changed.",
        { reviewRequestId: input.reviewRequestId },
      );
    }
    await writeAuditLog(tx, ctx, {
      eventType: "user_reviewed",
      planId: pending.planId,
      stepId,
      payload: {
        action: "review_unsnoozed",
        reviewRequestId: input.reviewRequestId,
        snoozedUserId: userId,
        until: ended.until.toISOString(),
      },
    });
    return { reviewRequestId: input.reviewRequestId };
  });
}
