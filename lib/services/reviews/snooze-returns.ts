/**
 * The scheduler's return of snoozed reviews (docs/reviews.md, "Snooze"), a
 * step of every tick (review-scheduler.ts). A snooze whose time has come is
 * claimed with its plan `FOR UPDATE SKIP LOCKED` and ended in the same
 * transaction as its trail row and its `review.snooze_returned`, so with
 * several instances exactly one returns it, once; a restart's first tick
 * returns what came due meanwhile.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { selectRows } from "../../db/rows";
import { queueEvent } from "../notifications/events";
import { writeAuditLog } from "../shared/audit";
import type { Actor, ServiceContext } from "../shared/context";
import { DUE_PER_RUN } from "./due-review-claims";

/** Who brings a snoozed review back: Cairn's scheduler. */
export const SNOOZE_ACTOR: Actor = { type: "system", id: null, label: "Cairn (snooze)" };

/** Snoozes returned in one transaction; a tick takes batches until none is due or DUE_PER_RUN. */
const RETURN_BATCH = 100;

const returned = z.object({
  tenantId: z.string(),
  reviewRequestId: z.string(),
  planId: z.string(),
  stepId: z.string(),
  userId: z.string(),
  until: z.string(),
  pending: z.boolean(),
});

type Settings = Pick<ServiceContext, "stallThresholdSeconds" | "stepLeaseSeconds">;

/** Ends one batch of due snoozes; how many it ended. */
async function returnBatch(db: Database, settings: Settings, limit: number): Promise<number> {
  return db.transaction(async (tx) => {
    // The plan is locked first, the order every decision and trail writer takes.
    const rows = await selectRows(
      tx,
      returned,
      sql`with due as (
          select z.id from review_snooze z join research_plan p on p.id = z.plan_id
          where z.returned_at is null and z.until <= now()
          order by z.until
          limit ${limit}
          for update of p, z skip locked)
        update review_snooze z set returned_at = now()
        from due, review_request r
        where z.id = due.id and r.id = z.review_request_id
        returning z.tenant_id as "tenantId", z.review_request_id as "reviewRequestId",
          z.plan_id as "planId", r.step_id as "stepId", z.user_id as "userId",
          to_char(z.until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as until,
          r.status = 'pending' as pending`,
    );
    for (const row of rows) {
      // A review decided meanwhile has left every inbox: its snooze just ends.
      if (!row.pending) continue;
      const ctx: ServiceContext = {
        db: tx as unknown as Database,
        tenantId: row.tenantId,
        actor: SNOOZE_ACTOR,
        ...settings,
      };
      await writeAuditLog(tx, ctx, {
        eventType: "user_reviewed",
        planId: row.planId,
        stepId: row.stepId,
        payload: {
          action: "snooze_returned",
          reviewRequestId: row.reviewRequestId,
          snoozedUserId: row.userId,
          until: row.until,
        },
      });
      await queueEvent(tx, row.tenantId, "review.snooze_returned", row.reviewRequestId, {
        snoozedUserId: row.userId,
        snoozedUntil: row.until,
      });
    }
    return rows.length;
  });
}

/**
 * Returns the snoozes whose time has come, earliest first, at most `most`
 * (DUE_PER_RUN a tick unless given, as for every kind of due work: the next
 * tick goes on where this one stopped); how many it returned or ended.
 */
export async function returnDueSnoozes(
  db: Database,
  settings: Settings,
  most = DUE_PER_RUN,
): Promise<number> {
  let total = 0;
  while (total < most) {
    const limit = Math.min(RETURN_BATCH, most - total);
    const batch = await returnBatch(db, settings, limit);
    total += batch;
    if (batch < limit) break;
  }
  return total;
}
