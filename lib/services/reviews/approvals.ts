/**
 * The approvals of a review that needs several people's (docs/reviews.md,
 * "Quorum"): read and written inside the decision's transaction, after the
 * plan is locked, so two people approving at once are counted one after the
 * other. The rule on which count is the engine's (`approvalQuorum`).
 */
import "server-only";
import { asc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Executor, Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { reviewApprovals } from "../../db/schema";
import { type Approval, countedApprovals } from "../../plan-engine/checkpoint-guard";
import {
  DECISION_CHANNELS,
  DECISION_POLICIES,
  MAX_APPROVALS_REQUIRED,
} from "../../plan-engine/states";
import type { Actor } from "../shared/context";
import { currentReviewDigest } from "./review-digest";

/**
 * The person an approval is theirs: the signed-in user, or the user whose
 * credential relays it (one person counts once, whichever way they answered).
 */
export function approverOf(actor: Actor): string | null {
  if (actor.type === "user") return actor.id;
  return actor.credential?.userId ?? actor.id;
}

/**
 * A review's approvals, oldest first. One row per person, so at most as many
 * as the team has people; the read is capped all the same, at twice the most
 * a review may need (stale rows beyond that cannot change a count it reaches).
 */
export async function readApprovals(db: Executor, reviewRequestId: string): Promise<Approval[]> {
  const rows = await db
    .select({
      approverId: reviewApprovals.approverId,
      label: reviewApprovals.approvedByLabel,
      channel: reviewApprovals.channel,
      digest: reviewApprovals.reviewDigest,
    })
    .from(reviewApprovals)
    .where(eq(reviewApprovals.reviewRequestId, reviewRequestId))
    .orderBy(asc(reviewApprovals.createdAt), asc(reviewApprovals.id))
    .limit(MAX_APPROVALS_REQUIRED * 4);
  return rows;
}

/**
 * Keeps one person's approval: a first one is inserted, a later one by the
 * same person (of changed content, or after a policy switch) replaces theirs.
 */
export async function keepApproval(
  tx: Transaction,
  write: {
    tenantId: string;
    planId: string;
    reviewRequestId: string;
    approverId: string;
    actor: Actor;
    channel: Approval["channel"];
    digest: string;
  },
): Promise<void> {
  const now = new Date();
  await tx
    .insert(reviewApprovals)
    .values({
      tenantId: write.tenantId,
      planId: write.planId,
      reviewRequestId: write.reviewRequestId,
      approverId: write.approverId,
      approvedByType: write.actor.type,
      approvedById: write.actor.id,
      approvedByLabel: write.actor.label,
      channel: write.channel,
      reviewDigest: write.digest,
      createdAt: now,
    })
    .onConflictDoUpdate({
      target: [reviewApprovals.reviewRequestId, reviewApprovals.approverId],
      set: {
        approvedByType: write.actor.type,
        approvedById: write.actor.id,
        approvedByLabel: write.actor.label,
        channel: write.channel,
        reviewDigest: write.digest,
        createdAt: sql`excluded.created_at`,
      },
    });
}

const shownRow = z.object({
  reviewRequestId: z.string(),
  required: z.number(),
  digest: z.string(),
  policy: z.enum(DECISION_POLICIES),
  approvals: z.array(
    z.object({
      approverId: z.string(),
      label: z.string(),
      channel: z.enum(DECISION_CHANNELS),
      digest: z.string(),
    }),
  ),
});

/** "k of N" and who approved, as every place that shows a review shows it. */
export type ApprovalsShown = { count: number; required: number; approvedBy: string[] };

/**
 * The approvals that count now for each of the team's pending `reviewIds`
 * needing more than one (the others are absent from the answer): counted on
 * the content each shows now and the policy in force (`countedApprovals`).
 * One statement for a page of reviews; each review's approvals capped as in
 * `readApprovals`.
 */
export async function approvalsShown(
  db: Executor,
  tenantId: string,
  reviewIds: readonly string[],
): Promise<Map<string, ApprovalsShown>> {
  const shown = new Map<string, ApprovalsShown>();
  if (reviewIds.length === 0) return shown;
  const rows = await selectRows(
    db,
    shownRow,
    sql`select review.id as "reviewRequestId", review.approvals_required as required,
        ${currentReviewDigest} as digest, tenant.decision_policy as policy,
        coalesce((select jsonb_agg(jsonb_build_object('approverId', a.approver_id,
            'label', a.approved_by_label, 'channel', a.channel, 'digest', a.review_digest)
            order by a.created_at, a.id)
          from (select * from review_approval
            where review_request_id = review.id
            order by created_at, id limit ${MAX_APPROVALS_REQUIRED * 4}) a), '[]'::jsonb) as approvals
      from review_request review
        join plan_step step on step.id = review.step_id
        join tenant on tenant.id = review.tenant_id
      where review.tenant_id = ${tenantId}::uuid
        and review.id = any(${`{${reviewIds.join(",")}}`}::uuid[])
        and review.approvals_required > 1`,
  );
  for (const row of rows) {
    const counted = countedApprovals(row, row.approvals);
    shown.set(row.reviewRequestId, {
      count: counted.length,
      required: row.required,
      approvedBy: counted.map((a) => a.label),
    });
  }
  return shown;
}
