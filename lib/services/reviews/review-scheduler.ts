/**
 * The review scheduler (docs/reviews.md): its tick (due-soon notices,
 * deadlines, escalation levels, snooze returns, stalled plans) and the timer
 * every app instance runs.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { selectRows } from "../../db/rows";
import { logWarning } from "../../log";
import { queueEvent } from "../notifications/events";
import { notificationsQueued } from "../notifications/queued";
import { kickIfQueuedSince } from "../notifications/runtime";
import { markStalledPlans } from "../plans/mark-stalled-plans";
import { applyDueReviews } from "./deadline-actions";
import { DUE_PER_RUN, type SchedulerSettings } from "./due-review-claims";
import { applyDueEscalations } from "./escalation-levels";
import { returnDueSnoozes } from "./snooze-returns";

/** Due-soon notices queued in one transaction; a tick takes batches until none is left or DUE_PER_RUN. */
export const DUE_SOON_BATCH = 100;

/**
 * Queues `review.due_soon` once per review: when 80% of its time has passed, or
 * 5 minutes before the deadline if that comes first (`dueSoonAt` in the engine,
 * repeated here as the query). A review already past its deadline gets
 * `review.timed_out` instead. A batch at a time, the earliest deadlines first.
 */
export async function queueDueSoonReviews(db: Database): Promise<number> {
  let queued = 0;
  for (;;) {
    const limit = Math.min(DUE_SOON_BATCH, DUE_PER_RUN - queued);
    const batch = await queueDueSoonBatch(db, limit);
    queued += batch;
    // A short batch: none is left but those another scheduler holds, which it queues.
    if (batch < limit || queued >= DUE_PER_RUN) return queued;
  }
}

async function queueDueSoonBatch(db: Database, limit: number): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = await selectRows(
      tx,
      z.object({ id: z.string(), tenantId: z.string() }),
      sql`update review_request set due_soon_notified_at = now()
        where id in (
          select id from review_request
          where status = 'pending' and due_at is not null and due_soon_notified_at is null
            and escalated_at is null and due_at > now()
            and now() >= due_at - least(interval '5 minutes', (due_at - created_at) * 0.2)
          order by due_at
          limit ${limit}
          for update skip locked)
        returning id, tenant_id as "tenantId"`,
    );
    for (const row of rows) await queueEvent(tx, row.tenantId, "review.due_soon", row.id, {});
    return rows.length;
  });
}

/**
 * One scheduler tick: due-soon notices, the deadlines themselves, the
 * escalation chains' levels (after the deadlines, so a deadline that ends a
 * chain comes first), snoozed reviews whose time came (snooze-returns.ts), then
 * the plans whose steps' holders stopped renewing their leases are marked
 * stalled (lib/services/plans/mark-stalled-plans.ts).
 */
export async function runReviewScheduler(
  db: Database,
  settings: SchedulerSettings,
): Promise<{
  dueSoon: number;
  applied: number;
  escalated: number;
  snoozesReturned: number;
  stalled: number;
}> {
  const dueSoon = await queueDueSoonReviews(db);
  const applied = await applyDueReviews(db, settings);
  const escalated = await applyDueEscalations(db, settings);
  const snoozesReturned = await returnDueSnoozes(db, settings);
  const stalled = await markStalledPlans(db, settings);
  return { dueSoon, applied, escalated, snoozesReturned, stalled };
}

/**
 * The timer every app instance runs (lib/startup.ts): a tick at once (a
 * restart applies what fell due while no instance ran), then every
 * `intervalMs`. Unref'd, so it never keeps a process (or a test) alive; a tick
 * that fails is logged and the next one tries again. `housekeeping` runs in
 * the same tick after the deadlines (the startup passes the deletion of
 * unused OAuth clients), so no instance needs a second timer.
 */
export function startReviewScheduler(
  db: () => Promise<Database>,
  settings: SchedulerSettings,
  intervalMs: number,
  housekeeping?: (db: Database) => Promise<unknown>,
): () => void {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    const queuedBefore = notificationsQueued();
    try {
      const database = await db();
      await runReviewScheduler(database, settings);
      // The reviews it applied queued review.timed_out / due_soon / snooze_returned: send them now.
      kickIfQueuedSince(queuedBefore);
      await housekeeping?.(database);
    } catch (error) {
      logWarning(
        `Cairn: the review deadline check failed; it runs again in ${intervalMs} ms`,
        error,
      );
    } finally {
      running = false;
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
