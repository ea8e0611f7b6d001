/**
 * A review's deadline (docs/reviews.md): when a review is due, how the
 * scheduler claims it (due-review-claims.ts), and its action. approve, reject
 * and skip go through `submitUserDecision`, the one decision service, inside
 * the claiming transaction and as the actor "Cairn (deadline)"; escalate hands
 * the review to the admins and leaves it pending (escalation-levels.ts).
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Transaction } from "../../db/client";
import { ACTOR_TYPES } from "../../db/schema";
import {
  deadlineReplacedReason,
  decideTimeout,
  TIMEOUT_ACTIONS,
  timeoutActionInForce,
  timeoutActionNotHeld,
} from "../../plan-engine/review-deadlines";
import { DECISION_POLICIES, type ReviewDecision } from "../../plan-engine/states";
import { queueEvent } from "../notifications/events";
import { submitUserDecision } from "../plans/submit-user-decision";
import { writeAuditLog } from "../shared/audit";
import { getStep, loadCheckpoints } from "../shared/plan-access";
import {
  applyEachDue,
  type Claim,
  deadlineContext,
  type SchedulerSettings,
  type Scope,
  utc,
} from "./due-review-claims";
import { escalateReview } from "./escalation-levels";

const dueReview = z.object({
  id: z.string(),
  tenantId: z.string(),
  planId: z.string(),
  stepId: z.string(),
  onTimeout: z.enum(TIMEOUT_ACTIONS),
  dueAt: z.string(),
  requestedByType: z.enum(ACTOR_TYPES),
  deadlineFromTeam: z.boolean(),
  onTimeoutReplaced: z.enum(TIMEOUT_ACTIONS).nullable(),
  // The team's rules as they stand while the firing holds the team's row.
  decisionPolicy: z.enum(DECISION_POLICIES),
  teamOnTimeout: z.enum(TIMEOUT_ACTIONS).nullable(),
});
type DueReview = z.infer<typeof dueReview>;

/**
 * Pending, due and not yet escalated (an escalated review keeps its past
 * `due_at` so the inbox can show it, but it is never escalated twice), over a
 * review_request row `r`. Text, so the loop's fixed statements embed it too.
 */
export const DUE_REVIEW = `r.status = 'pending' and r.due_at is not null and r.due_at <= now()
  and r.on_timeout is not null and r.escalated_at is null`;
export const dueWhere = sql.raw(DUE_REVIEW);

const DUE_TIMEOUT = {
  row: dueReview,
  columns: sql`r.id, r.tenant_id as "tenantId", r.plan_id as "planId", r.step_id as "stepId",
        r.on_timeout as "onTimeout", ${utc("r.due_at")} as "dueAt",
        r.requested_by_type as "requestedByType", r.deadline_from_team as "deadlineFromTeam",
        r.on_timeout_replaced as "onTimeoutReplaced",
        t.decision_policy as "decisionPolicy", t.review_on_timeout as "teamOnTimeout"`,
  due: dueWhere,
  key: sql`r.due_at`,
} satisfies Claim<DueReview>;

async function applyTimeout(
  tx: Transaction,
  settings: SchedulerSettings,
  review: DueReview,
): Promise<void> {
  const ctx = deadlineContext(tx, settings, review.tenantId);
  // Read after the claim locked the plan's row, so the steps' order and
  // checkpoints stand as read until this commits.
  const step = await getStep(tx, ctx, review.planId, review.stepId);
  // The one place a deadline acts: its action is checked against the policy in
  // force now, then against the checkpoint rule.
  const inForce = timeoutActionNotHeld(
    timeoutActionInForce(
      review.decisionPolicy,
      {
        onTimeout: review.onTimeout,
        requestedBy: review.requestedByType,
        fromTeam: review.deadlineFromTeam,
      },
      review.teamOnTimeout,
    ),
    {
      stepOrder: step.stepOrder,
      checkpoints: await loadCheckpoints(tx, ctx, review.planId),
    },
  );
  if (inForce.replaced) {
    await tx.execute(
      sql`update review_request set on_timeout = ${inForce.onTimeout},
        on_timeout_replaced = coalesce(on_timeout_replaced, on_timeout) where id = ${review.id}::uuid`,
    );
  }
  const replacedFrom = review.onTimeoutReplaced ?? inForce.replaced?.from;
  if (replacedFrom !== undefined) {
    await writeAuditLog(tx, ctx, {
      eventType: "user_reviewed",
      planId: review.planId,
      stepId: review.stepId,
      payload: {
        action: "deadline_action_replaced",
        reviewRequestId: review.id,
        from: replacedFrom,
        to: inForce.onTimeout,
        reason: inForce.replaced?.reason ?? deadlineReplacedReason(replacedFrom, inForce.onTimeout),
        decisionPolicy: review.decisionPolicy,
      },
    });
  }
  const outcome = decideTimeout(inForce.onTimeout, Date.parse(review.dueAt));
  let reason: string;
  if (outcome.kind === "decide") {
    await submitUserDecision(ctx, {
      planId: review.planId,
      reviewRequestId: review.id,
      decision: outcome.decision satisfies ReviewDecision,
      feedback: outcome.feedback,
    });
    reason = outcome.feedback;
  } else {
    // The deadline's escalation is the last level: the review's chain stops with it.
    reason = await escalateReview(tx, ctx, review, {
      to: outcome.to,
      // Why this review went to the admins when its action was replaced: what they and the agent read.
      reason: () =>
        inForce.replaced ? `${outcome.reason} ${inForce.replaced.reason}` : outcome.reason,
      columns: sql`escalated_at = now(), escalation_due_at = null`,
    });
  }
  await queueEvent(tx, review.tenantId, "review.timed_out", review.id, {
    action: inForce.onTimeout,
    reason,
  });
}

/** Applies the due deadlines, earliest first, at most `limit` (DUE_PER_RUN unless given); answers how many. */
export function applyDueReviews(
  db: Database,
  settings: SchedulerSettings,
  scope: Scope = {},
  limit?: number,
): Promise<number> {
  return applyEachDue(
    db,
    settings,
    scope,
    { what: "deadline", claim: DUE_TIMEOUT, apply: applyTimeout },
    limit,
  );
}
