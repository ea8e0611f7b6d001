/**
 * A plan's or a team's deadline state as readers meet it (docs/reviews.md):
 * the columns the loop's reads carry (whether a review is due, and the latest
 * one a deadline decided or escalated), and the settling of due reviews
 * before the plan page or the inbox reads them (the inbox's a few at most).
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { selectRows } from "../../db/rows";
import { run, statement } from "../../db/statement";
import {
  DEADLINE_ACTOR_LABEL,
  TIMEOUT_ACTIONS,
  type TimeoutAction,
} from "../../plan-engine/review-deadlines";
import type { ServiceContext } from "../shared/context";
import { applyDueReviews, DUE_REVIEW, dueWhere } from "./deadline-actions";

export type TimedOutReview = {
  reviewRequestId: string;
  stepId: string;
  action: TimeoutAction;
  reason: string;
  at: string;
};

/**
 * Two columns, `"reviewDue"` and `"timedOut"`, for a statement over the plan
 * `plan` of the tenant `tenant` (SQL expressions): whether the plan has a due
 * review, and its latest review when a deadline decided or escalated it. The
 * loop's reads (get_next_step's claim, get_plan_status) carry them, so a call
 * learns of a due review without a round trip of its own.
 */
export function deadlineStateColumns(plan: string, tenant: string): string {
  return `exists (select 1 from review_request r
        where r.plan_id = ${plan} and r.tenant_id = ${tenant} and ${DUE_REVIEW}) as "reviewDue",
      (select json_build_object('reviewRequestId', r.id, 'stepId', r.step_id,
          'action', r.on_timeout,
          'reason', coalesce(d.feedback, case when r.escalated_at is not null then r.escalation_reason end),
          'at', to_char(coalesce(d.created_at, r.escalated_at) at time zone 'UTC',
            'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        from (select * from review_request
          where plan_id = ${plan} and tenant_id = ${tenant}
          order by created_at desc limit 1) r
          left join review_decision d on d.review_request_id = r.id
        where (d.decided_by_type = 'system' and d.decided_by_label = '${DEADLINE_ACTOR_LABEL.replaceAll("'", "''")}')
          or (r.status = 'pending' and r.escalated_at is not null)) as "timedOut"`;
}

/** The columns of `deadlineStateColumns`, parsed. */
export const deadlineStateRow = z.object({
  reviewDue: z.boolean(),
  timedOut: z
    .object({
      reviewRequestId: z.string(),
      stepId: z.string(),
      action: z.enum(TIMEOUT_ACTIONS),
      reason: z
        .string()
        .nullable()
        .transform((reason) => reason ?? ""),
      at: z.string(),
    })
    .nullable(),
});

const planDeadlines = statement(
  "deadline state of a plan",
  `select ${deadlineStateColumns("$1::uuid", "$2::uuid")}`,
  deadlineStateRow,
);

/** One statement: whether the plan has a due review. */
async function hasDueReview(
  ctx: Pick<ServiceContext, "db" | "tenantId">,
  planId: string,
): Promise<boolean> {
  const [row] = await run(ctx.db, planDeadlines, [planId, ctx.tenantId]);
  return row?.reviewDue ?? false;
}

/**
 * After a loop read reported a due review (`"reviewDue"`): applies the plan's
 * due reviews, one claiming transaction each, for the caller to read again.
 */
export async function applyDueReviewsOfPlan(
  ctx: Pick<ServiceContext, "db" | "tenantId" | "stallThresholdSeconds" | "stepLeaseSeconds">,
  planId: string,
): Promise<void> {
  await applyDueReviews(ctx.db, ctx, { planId, tenantId: ctx.tenantId });
}

/**
 * Before the plan page reads a plan: applies that plan's due reviews first, so
 * it never shows a review whose deadline passed. One indexed query when
 * nothing is due. (get_next_step and get_plan_status read the same columns in
 * their own statement and call `applyDueReviewsOfPlan` only when one is due.)
 */
export async function settleDeadlinesOfPlan(
  ctx: Pick<ServiceContext, "db" | "tenantId" | "stallThresholdSeconds" | "stepLeaseSeconds">,
  planId: string,
): Promise<void> {
  if (await hasDueReview(ctx, planId)) await applyDueReviewsOfPlan(ctx, planId);
}

/**
 * The most due reviews the inbox applies in its request, the earliest due
 * first: the scheduler applies the rest on its next tick, and the inbox leaves
 * out a review still due meanwhile (`listInbox`), so it never lists one whose
 * deadline passed, however many fell due at once.
 */
export const INBOX_SETTLES = 10;

/**
 * Before the inbox lists a team's reviews: applies up to INBOX_SETTLES of the
 * team's due reviews first. One indexed query when nothing is due.
 */
export async function settleDeadlinesOfTenant(
  ctx: Pick<ServiceContext, "db" | "tenantId" | "stallThresholdSeconds" | "stepLeaseSeconds">,
): Promise<void> {
  const [row] = await selectRows(
    ctx.db,
    z.object({ due: z.boolean() }),
    sql`select exists (select 1 from review_request r
      where r.tenant_id = ${ctx.tenantId}::uuid and ${dueWhere}) as due`,
  );
  if (row?.due) await applyDueReviews(ctx.db, ctx, { tenantId: ctx.tenantId }, INBOX_SETTLES);
}
