/**
 * The review waiting for a person, as the plan page's panel and the review
 * card inside an MCP client (lib/services/reviews/review-card.ts) read it
 * (lib/services/reviews/review-view.ts shows it), and the team it may be
 * assigned to.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { selectRows } from "../../db/rows";
import { STEP_STATUSES } from "../../plan-engine/states";
import { approvalsShown } from "../reviews/approvals";
import {
  type PendingReviewRow,
  type PendingReviewView,
  pendingReviewOf,
  reviewShownColumns,
  reviewShownRow,
  type TeamMember,
} from "../reviews/review-view";
import type { ServiceContext } from "../shared/context";
import { listTenantUsers } from "./users-and-keys";

/** The team's active members, as the review's assignee is named. */
export async function teamMembers(ctx: ServiceContext): Promise<TeamMember[]> {
  const members = await listTenantUsers(ctx);
  return members
    .filter((member) => member.disabledAt === null)
    .map((member) => ({
      userId: member.userId,
      label: member.name ? `${member.name} <${member.email}>` : member.email,
    }));
}

/** A review waiting for a person, as read (`reviewShownColumns`), with every step's status. */
const pendingReviewRow = reviewShownRow.extend({
  steps: z.array(z.object({ id: z.string(), status: z.enum(STEP_STATUSES) })),
});

/**
 * The plan's pending review (the oldest, if ever several), with every step's
 * status, in one statement, and its approvals; null when none waits. The
 * caller has checked the plan is the tenant's.
 */
export async function readPendingReviewRow(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
): Promise<PendingReviewRow | null> {
  const [row] = await selectRows(
    db,
    pendingReviewRow,
    sql`select ${reviewShownColumns},
        (select jsonb_agg(jsonb_build_object('id', s.id, 'status', s.status))
          from plan_step s where s.plan_id = review.plan_id) as steps
      from review_request review join plan_step step on step.id = review.step_id
      where review.plan_id = ${planId}::uuid and review.tenant_id = ${ctx.tenantId}::uuid
        and review.status = 'pending'
      order by review.created_at
      limit 1`,
  );
  if (!row) return null;
  const approvals = await approvalsShown(db, ctx.tenantId, [row.reviewRequestId]);
  return { ...row, approvals: approvals.get(row.reviewRequestId) ?? null };
}

/** The plan's pending review as shown on its own (the review card's read); null when none waits. */
export async function readPendingReview(
  ctx: ServiceContext,
  planId: string,
): Promise<PendingReviewView | null> {
  const [pendingReview, members] = await Promise.all([
    readPendingReviewRow(ctx.db, ctx, planId),
    teamMembers(ctx),
  ]);
  return pendingReviewOf({ pendingReview }, members);
}
