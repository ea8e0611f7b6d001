/**
 * plan.completed, plan.failed and plan.stalled: queued where a plan's status is
 * written, in the same statement or transaction (the outbox). The loop's fixed
 * statements carry the insert as a CTE (lib/services/loop/completion-effects.ts
 * and complete-step-guarded.ts, no extra round trip), for the statuses that
 * `planEventFor` names; a status written by its own statement queues it here.
 */
import "server-only";
import { sql } from "drizzle-orm";
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
 * The insert, from the plan row as the statement found it: `p.status <> new`
 * holds only when the status really changes. Only a status that raises an
 * event (`planEventFor`) gets here.
 */
const insertFor = (planId: string, status: PlanStatus) =>
  sql`insert into notification_event (tenant_id, event, payload)
    select p.tenant_id, 'plan.' || ${status}::text,
      jsonb_build_object('planId', p.id, 'planTitle', p.name, 'status', ${status}::text)
    from research_plan p
    where p.id = ${planId}::uuid and p.status::text <> ${status}::text`;

/** For a status written by its own statement (setPlanStatus), before it: the event, if the move raises one. */
export async function enqueuePlanEvent(
  tx: Executor,
  planId: string,
  before: PlanStatus,
  after: PlanStatus,
): Promise<void> {
  if (before === after || !planEventFor(after)) return;
  await tx.execute(insertFor(planId, after));
  noteNotificationQueued();
}
