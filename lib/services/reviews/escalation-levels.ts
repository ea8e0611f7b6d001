/**
 * A review's escalation chain (docs/reviews.md, "Escalation chains"), applied
 * level by level by its own scheduler step, `applyDueEscalations`, claimed the
 * same way as a deadline (due-review-claims.ts); and the hand-over both a
 * chain's level and a deadline's escalation make (`escalateReview`).
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Transaction } from "../../db/client";
import { arrayParam } from "../../db/statement";
import {
  type EscalationTarget,
  escalationReason,
  nextEscalation,
} from "../../plan-engine/review-deadlines";
import { queueEvent } from "../notifications/events";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import {
  applyEachDue,
  type Claim,
  deadlineContext,
  type SchedulerSettings,
  type Scope,
  utc,
} from "./due-review-claims";
import { escalationAssignee, storedEscalationChain } from "./escalation-chain";

/**
 * Hands a pending review to `to` (a deadline's escalation or a chain's
 * level), in the claiming transaction, and writes the trail's
 * `review_escalated` row, its reason kept on the review as well
 * (`escalation_reason`, which get_next_step reads); the caller sets its own
 * columns and queues its notification.
 */
export async function escalateReview(
  tx: Transaction,
  ctx: ServiceContext,
  review: { id: string; planId: string; stepId: string },
  escalation: {
    to: EscalationTarget;
    level?: number;
    reason: (toLabel: string) => string;
    columns: SQL;
  },
): Promise<string> {
  const assignee = await escalationAssignee(tx, ctx.tenantId, escalation.to);
  const toLabel = assignee.assignedRole === "admin" ? "the admins" : assignee.emails.join(", ");
  const reason = escalation.reason(toLabel);
  await tx.execute(
    sql`update review_request set assigned_role = ${assignee.assignedRole},
        assigned_user_id = ${assignee.assignedUserId}::uuid,
        assigned_user_ids = ${assignee.assignedUserIds === null ? null : arrayParam(assignee.assignedUserIds)}::uuid[],
        escalation_reason = ${reason}, ${escalation.columns}
      where id = ${review.id}::uuid`,
  );
  await writeAuditLog(tx, ctx, {
    eventType: "user_reviewed",
    planId: review.planId,
    stepId: review.stepId,
    payload: {
      action: "review_escalated",
      reviewRequestId: review.id,
      reason,
      ...(escalation.level === undefined ? {} : { level: escalation.level }),
      assignedRole: assignee.assignedRole,
      assignedUserIds:
        assignee.assignedUserId !== null
          ? [assignee.assignedUserId]
          : (assignee.assignedUserIds ?? []),
      assignedUserEmails: assignee.emails,
    },
  });
  return reason;
}

const dueEscalation = z.object({
  id: z.string(),
  tenantId: z.string(),
  planId: z.string(),
  stepId: z.string(),
  createdAt: z.string(),
  escalationChain: storedEscalationChain,
  escalationLevel: z.number(),
  escalationDueAt: z.string(),
});
type DueEscalation = z.infer<typeof dueEscalation>;

/**
 * Pending, its chain's next level come, and not escalated by its deadline
 * (which ends the chain), over a review_request row `r`; served by the
 * partial index review_request_escalation_idx.
 */
const DUE_ESCALATION = {
  row: dueEscalation,
  columns: sql`r.id, r.tenant_id as "tenantId", r.plan_id as "planId", r.step_id as "stepId",
        ${utc("r.created_at")} as "createdAt", r.escalation_chain as "escalationChain",
        r.escalation_level as "escalationLevel", ${utc("r.escalation_due_at")} as "escalationDueAt"`,
  due: sql`r.status = 'pending' and r.escalation_due_at is not null
        and r.escalation_due_at <= now() and r.escalated_at is null`,
  key: sql`r.escalation_due_at`,
} satisfies Claim<DueEscalation>;

/**
 * Applies a review's next escalation level: hands it on, counts the level and
 * sets the next one's time (the engine's `nextEscalation`; none after the
 * last), writes the trail's row and queues `review.escalated` to the people
 * of that level. The claim's lock, and its condition checked again once the
 * row is locked, make each level apply once.
 */
async function applyEscalation(
  tx: Transaction,
  settings: SchedulerSettings,
  review: DueEscalation,
): Promise<void> {
  const ctx = deadlineContext(tx, settings, review.tenantId);
  const levels = review.escalationChain;
  const current = levels[review.escalationLevel];
  if (!current) {
    // A chain stored with fewer levels than counted (written by hand): nothing is left to apply.
    await tx.execute(
      sql`update review_request set escalation_due_at = null where id = ${review.id}::uuid`,
    );
    return;
  }
  const level = review.escalationLevel + 1;
  const dueAt = Date.parse(review.escalationDueAt);
  const following = nextEscalation(levels, level, Date.parse(review.createdAt), dueAt);
  const nextDue = following ? new Date(following.dueAt).toISOString() : null;
  const reason = await escalateReview(tx, ctx, review, {
    to: current.to,
    level,
    reason: (toLabel) => escalationReason(level, dueAt, toLabel),
    columns: sql`escalation_level = ${level}, escalation_due_at = ${nextDue}::timestamptz`,
  });
  await queueEvent(tx, review.tenantId, "review.escalated", review.id, { level, reason });
}

/** The scheduler's escalation step: applies the due levels of the reviews' chains, at most DUE_PER_RUN; answers how many. */
export function applyDueEscalations(
  db: Database,
  settings: SchedulerSettings,
  scope: Scope = {},
): Promise<number> {
  return applyEachDue(db, settings, scope, {
    what: "escalation level",
    claim: DUE_ESCALATION,
    apply: applyEscalation,
  });
}
