/**
 * plan.completed, plan.failed and plan.stalled: queued where a plan's status is
 * written, in the same statement or transaction (the outbox). The loop's one-
 * statement writes get a CTE (no extra round trip), added only when the plan
 * ends, or, for the guarded fast path, filtered by the status it decides.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import type { Executor } from "../../db/client";
import type { PlanStatus } from "../../plan-engine/states";
import type { NotificationEvent } from "./enqueue-notification";
import { noteNotificationQueued } from "./queued";

/** The event a plan's move to `status` raises, if any. */
export function planEventFor(status: PlanStatus): NotificationEvent | null {
  if (status === "completed") return "plan.completed";
  if (status === "failed") return "plan.failed";
  if (status === "stalled") return "plan.stalled";
  return null;
}

/**
 * The insert, from the plan row as the statement found it: a CTE reads the
 * row before the statement's own update, so `p.status <> new` holds only when
 * the status really changes. `status` is an SQL text expression.
 */
const insertFor = (planId: string, status: SQL, from: SQL) =>
  sql`insert into notification_event (tenant_id, event, payload)
    select p.tenant_id, 'plan.' || ${status},
      jsonb_build_object('planId', p.id, 'planTitle', p.name, 'status', ${status})
    from research_plan p${from}
    where p.id = ${planId}::uuid and p.status::text <> ${status}
      and ${status} in ('completed', 'failed', 'stalled')`;

/**
 * For a one-statement write whose new status is known before it runs (the
 * loop's slow path, server steps): the CTE when the plan ends, else none.
 */
export function planEndedCte(planId: string, after: PlanStatus): SQL[] {
  const event = planEventFor(after);
  if (event !== "plan.completed" && event !== "plan.failed") return [];
  noteNotificationQueued();
  return [sql`plan_event as (${insertFor(planId, sql`${after}::text`, sql``)})`];
}

/**
 * For a guarded write (decidedPlanUpdate): the CTE reads the status the
 * statement's `decided` relation picked and inserts only when it ends the plan.
 * The caller notes the queued event when the answer says the plan ended.
 */
export function decidedPlanEndedCte(planId: string): SQL {
  return sql`plan_event as (${insertFor(planId, sql`decided.plan_status::text`, sql`, decided`)})`;
}

/** For a status written by its own statement (setPlanStatus), before it: the event, if the move raises one. */
export async function enqueuePlanEvent(
  tx: Executor,
  planId: string,
  before: PlanStatus,
  after: PlanStatus,
): Promise<void> {
  if (before === after || !planEventFor(after)) return;
  await tx.execute(insertFor(planId, sql`${after}::text`, sql``));
  noteNotificationQueued();
}
