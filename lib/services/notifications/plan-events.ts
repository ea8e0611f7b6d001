/**
 * plan.completed, plan.failed and plan.stalled: queued where a plan's status is
 * written, in the same statement or transaction (the outbox). The loop's fixed
 * statements carry the insert (`planEventInsert`) as a CTE, so it costs no
 * extra round trip; a status written by its own statement queues it with
 * `enqueuePlanEvent`.
 */
import "server-only";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { run, sqlLiterals, statement } from "../../db/statement";
import { PLAN_STATUSES, type PlanStatus } from "../../plan-engine/states";
import type { NotificationEvent } from "./enqueue-notification";
import { noteNotificationQueued } from "./queued";

/** The event a plan's move to `status` raises, if any. */
export function planEventFor(status: PlanStatus): NotificationEvent | null {
  if (status === "completed") return "plan.completed";
  if (status === "failed") return "plan.failed";
  if (status === "stalled") return "plan.stalled";
  return null;
}

/** The statuses whose move raises an event (`planEventFor`). */
const EVENT_STATUSES = PLAN_STATUSES.filter((status) => planEventFor(status) !== null);

/**
 * The outbox insert for the plan `plan` moving to `status` (SQL text
 * expressions; `from` adds relations the status is read from), as the loop's
 * fixed statements embed it (lib/services/loop). It reads the plan row as the
 * statement found it, before the statement's own update, so
 * `p.status <> status` holds only when the status really changes, and it
 * inserts only for a status that raises an event.
 */
export function planEventInsert(plan: string, status: string, from = ""): string {
  return `insert into notification_event (tenant_id, event, payload)
    select p.tenant_id, 'plan.' || ${status},
      jsonb_build_object('planId', p.id, 'planTitle', p.name, 'status', ${status})
    from research_plan p${from}
    where p.id = ${plan} and p.status::text <> ${status}
      and ${status} in (${sqlLiterals(EVENT_STATUSES)})`;
}

const queuePlanEvent = statement(
  "queue a plan event",
  planEventInsert("$1::uuid", "$2::text"),
  z.unknown(),
);

/** For a status written by its own statement (setPlanStatus), before it: the event, if the move raises one. */
export async function enqueuePlanEvent(
  tx: Executor,
  planId: string,
  before: PlanStatus,
  after: PlanStatus,
): Promise<void> {
  if (before === after || !planEventFor(after)) return;
  await run(tx, queuePlanEvent, [planId, after]);
  noteNotificationQueued();
}
