/**
 * The payload of the review notifications Cairn queues (`review.requested`,
 * `review.due_soon`, `review.timed_out`; docs/reviews.md lists the keys). One
 * shape for all three, read in the transaction that queues the event, so the
 * dispatcher needs no further lookup.
 */
import "server-only";
import { sql } from "drizzle-orm";
import type { Executor } from "../../db/client";
import { selectRows } from "../../db/rows";
import type { NotificationEvent } from "../notifications/enqueue-notification";
import { enqueueNotification } from "../notifications/enqueue-notification";

/** The agent's summary is cut to this many characters in a notification. */
const SUMMARY_CHARS = 500;

export type ReviewEventPayload = {
  reviewRequestId: string;
  planId: string;
  planTitle: string;
  stepId: string;
  stepOrder: number;
  stepType: string;
  summary: string;
  questions: string[];
  createdAt: string;
  dueAt: string | null;
  onTimeout: string | null;
  assignedUserId: string | null;
  assignedUserEmail: string | null;
  assignedRole: string | null;
};

export async function queueReviewEvent(
  tx: Executor,
  tenantId: string,
  event: Extract<NotificationEvent, `review.${string}`>,
  reviewRequestId: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const [row] = await selectRows<ReviewEventPayload>(
    tx,
    sql`select r.id as "reviewRequestId", r.plan_id as "planId", p.name as "planTitle",
        r.step_id as "stepId", s.step_order as "stepOrder", s.step_type as "stepType",
        left(r.summary, ${SUMMARY_CHARS}) as summary, r.questions,
        to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
        to_char(r.due_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "dueAt",
        r.on_timeout as "onTimeout", r.assigned_user_id as "assignedUserId",
        u.email as "assignedUserEmail", r.assigned_role as "assignedRole"
      from review_request r
        join research_plan p on p.id = r.plan_id
        join plan_step s on s.id = r.step_id
        left join app_user u on u.id = r.assigned_user_id
      where r.id = ${reviewRequestId}::uuid and r.tenant_id = ${tenantId}::uuid`,
  );
  if (!row) return;
  await enqueueNotification(tx, tenantId, event, { ...row, ...extra });
}
