/**
 * The review deadline scheduler (docs/reviews.md). Everything it knows is in
 * the database: a due review is found by the partial index on `due_at`, and
 * claimed with its plan by `FOR UPDATE SKIP LOCKED`, so with several app
 * instances (and the opportunistic runs of get_next_step, get_plan_status and
 * the plan page) exactly one applies it and the others pass it by. A restart
 * loses nothing: the first run after start applies every review that fell due
 * meanwhile.
 *
 * approve, reject and skip go through `submitUserDecision`, the one decision
 * service, inside the claiming transaction and as the actor "Cairn (deadline)";
 * escalate hands the review to the admins and leaves it pending. A review's
 * escalation chain (docs/reviews.md, "Escalation chains") is applied level by
 * level by its own step, `applyDueEscalations`, claimed the same way.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { ACTOR_TYPES } from "../../db/schema";
import { arrayParam, run, statement } from "../../db/statement";
import { logWarning } from "../../log";
import {
  DEADLINE_ACTOR_LABEL,
  deadlineReplacedReason,
  decideTimeout,
  type EscalationTarget,
  escalationReason,
  nextEscalation,
  TIMEOUT_ACTIONS,
  type TimeoutAction,
  timeoutActionInForce,
} from "../../plan-engine/review-deadlines";
import { DECISION_POLICIES, type ReviewDecision } from "../../plan-engine/states";
import { queueEvent } from "../notifications/events";
import { notificationsQueued } from "../notifications/queued";
import { kickIfQueuedSince } from "../notifications/runtime";
import { markStalledPlans } from "../plans/mark-stalled-plans";
import { submitUserDecision } from "../plans/submit-user-decision";
import { writeAuditLog } from "../shared/audit";
import type { Actor, ServiceContext } from "../shared/context";
import { escalationAssignee, storedEscalationChain } from "./escalation-chain";
import { returnDueSnoozes } from "./snooze-returns";

export const DEADLINE_ACTOR: Actor = { type: "system", id: null, label: DEADLINE_ACTOR_LABEL };

/** What a scheduler run needs besides the database: the loop's settings for the decision service. */
export type SchedulerSettings = Pick<ServiceContext, "stallThresholdSeconds" | "stepLeaseSeconds">;

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
const dueWhere = sql.raw(DUE_REVIEW);

type Scope = { planId?: string; tenantId?: string };

/**
 * Claims one review that `due` (SQL over its row `r`) selects, earliest
 * `orderBy` first, with its plan row (the lock order every decision takes) in
 * the caller's transaction, skipping any another transaction holds. The
 * team's row (`t`) is held in share mode with it, so the policy the firing
 * checks is the one in force until it commits; a review whose team is being
 * switched is passed by until the switch has revisited it.
 */
async function claimReview<Row>(
  tx: Transaction,
  claim: { row: z.ZodType<Row>; columns: SQL; due: SQL; orderBy: SQL },
  scope: Scope,
  passedBy: string[],
): Promise<Row | undefined> {
  const [row] = await selectRows(
    tx,
    claim.row,
    sql`select ${claim.columns}
      from review_request r join research_plan p on p.id = r.plan_id
        join tenant t on t.id = r.tenant_id
      where ${claim.due}
        and (${scope.planId ?? null}::uuid is null or r.plan_id = ${scope.planId ?? null}::uuid)
        and (${scope.tenantId ?? null}::uuid is null or r.tenant_id = ${scope.tenantId ?? null}::uuid)
        and not (r.id = any(${arrayParam(passedBy)}::uuid[]))
      order by ${claim.orderBy}
      limit 1
      for update of p, r skip locked for share of t skip locked`,
  );
  return row;
}

const utc = (column: string) =>
  sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

const DUE_TIMEOUT = {
  row: dueReview,
  columns: sql`r.id, r.tenant_id as "tenantId", r.plan_id as "planId", r.step_id as "stepId",
        r.on_timeout as "onTimeout", ${utc("r.due_at")} as "dueAt",
        r.requested_by_type as "requestedByType", r.deadline_from_team as "deadlineFromTeam",
        r.on_timeout_replaced as "onTimeoutReplaced",
        t.decision_policy as "decisionPolicy", t.review_on_timeout as "teamOnTimeout"`,
  due: dueWhere,
  orderBy: sql`r.due_at`,
};

/**
 * Hands a pending review to `to` (a deadline's escalation or a chain's
 * level), in the claiming transaction, and writes the trail's
 * `review_escalated` row; the caller sets its own columns and queues its
 * notification.
 */
async function escalateReview(
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
        ${escalation.columns}
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

function deadlineContext(tx: Transaction, settings: SchedulerSettings, tenantId: string) {
  const ctx: ServiceContext = {
    // The decision service runs inside the claiming transaction (its own
    // transaction becomes a savepoint), so the claim holds until it commits.
    db: tx as unknown as Database,
    tenantId,
    actor: DEADLINE_ACTOR,
    stallThresholdSeconds: settings.stallThresholdSeconds,
    stepLeaseSeconds: settings.stepLeaseSeconds,
  };
  return ctx;
}

async function applyTimeout(
  tx: Transaction,
  settings: SchedulerSettings,
  review: DueReview,
): Promise<void> {
  const ctx = deadlineContext(tx, settings, review.tenantId);
  // The one place a deadline acts: its action is checked against the policy in force now.
  const inForce = timeoutActionInForce(
    review.decisionPolicy,
    {
      onTimeout: review.onTimeout,
      requestedBy: review.requestedByType,
      fromTeam: review.deadlineFromTeam,
    },
    review.teamOnTimeout,
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
      reason: () => outcome.reason,
      columns: sql`escalated_at = now(), escalation_due_at = null`,
    });
  }
  await queueEvent(tx, review.tenantId, "review.timed_out", review.id, {
    action: inForce.onTimeout,
    reason,
  });
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
  orderBy: sql`r.escalation_due_at`,
};

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

/** One kind of due work on a review: how it is claimed, and how it is applied. */
type DueWork<Row> = {
  what: string;
  claim: { row: z.ZodType<Row>; columns: SQL; due: SQL; orderBy: SQL };
  apply: (tx: Transaction, settings: SchedulerSettings, review: Row) => Promise<void>;
};

/**
 * Claims and applies due work one review and one transaction at a time (of
 * one plan or tenant when scoped), and returns how many it applied. A review
 * whose action fails (its transaction rolls back) is logged and passed by for
 * the rest of this run, so it cannot hold up the reviews due after it; the
 * next run tries it again.
 */
async function applyEachDue<Row extends { id: string }>(
  db: Database,
  settings: SchedulerSettings,
  scope: Scope,
  work: DueWork<Row>,
): Promise<number> {
  let applied = 0;
  const passedBy: string[] = [];
  for (;;) {
    let claimed: Row | undefined;
    try {
      claimed = await db.transaction(async (tx) => {
        const review = await claimReview(tx, work.claim, scope, passedBy);
        if (review) {
          claimed = review;
          await work.apply(tx, settings, review);
        }
        return review;
      });
    } catch (error) {
      if (!claimed) throw error;
      passedBy.push(claimed.id);
      logWarning(
        `Cairn: the ${work.what} of review ${claimed.id} could not be applied; it is tried again on the next check`,
        error,
      );
      continue;
    }
    if (!claimed) return applied;
    applied += 1;
  }
}

/** Applies every due deadline; answers how many. */
export function applyDueReviews(
  db: Database,
  settings: SchedulerSettings,
  scope: Scope = {},
): Promise<number> {
  return applyEachDue(db, settings, scope, {
    what: "deadline",
    claim: DUE_TIMEOUT,
    apply: applyTimeout,
  });
}

/** The scheduler's escalation step: applies every due level of every review's chain; answers how many. */
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

/**
 * Queues `review.due_soon` once per review: when 80% of its time has passed, or
 * 5 minutes before the deadline if that comes first (`dueSoonAt` in the engine,
 * repeated here as the query). A review already past its deadline gets
 * `review.timed_out` instead.
 */
export async function queueDueSoonReviews(db: Database): Promise<number> {
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
          'action', r.on_timeout, 'reason', coalesce(d.feedback, a.payload->>'reason'),
          'at', to_char(coalesce(d.created_at, r.escalated_at) at time zone 'UTC',
            'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        from (select * from review_request
          where plan_id = ${plan} and tenant_id = ${tenant}
          order by created_at desc limit 1) r
          left join review_decision d on d.review_request_id = r.id
          left join lateral (select payload from plan_audit_log l
            where l.plan_id = r.plan_id and l.event_type = 'user_reviewed'
              and l.payload->>'action' = 'review_escalated'
              and l.payload->>'reviewRequestId' = r.id::text and l.payload->'level' is null
            limit 1) a on true
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
 * Before the inbox lists a team's reviews: applies the team's due reviews
 * first, so it never lists one whose deadline passed. One indexed query when
 * nothing is due.
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
  if (row?.due) await applyDueReviews(ctx.db, ctx, { tenantId: ctx.tenantId });
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

export type DeadlinesRevisited = {
  /** The team's pending reviews whose deadline is still to run. */
  pending: number;
  /** Each replaced action, with how many reviews it was replaced on. */
  replaced: { from: TimeoutAction; to: TimeoutAction; reviews: number }[];
};

const deadlineGroup = z.object({
  requestedByType: z.enum(ACTOR_TYPES),
  onTimeout: z.enum(TIMEOUT_ACTIONS),
  reviews: z.number(),
});

/**
 * A switch of the team's policy revisits its pending reviews, in the switch's
 * transaction (the team's row locked for update): each deadline whose action
 * the new policy forbids gets the one `timeoutActionInForce` names, its own
 * kept in `on_timeout_replaced`. Decided per (requester kind, action), so a
 * handful of statements whatever the team holds.
 */
export async function revisitPendingDeadlines(
  tx: Transaction,
  tenantId: string,
  team: { decisionPolicy: (typeof DECISION_POLICIES)[number]; teamOnTimeout: TimeoutAction | null },
): Promise<DeadlinesRevisited> {
  const groups = await selectRows(
    tx,
    deadlineGroup,
    sql`select r.requested_by_type as "requestedByType", r.on_timeout as "onTimeout",
        count(*)::int as reviews
      from review_request r
      where r.tenant_id = ${tenantId}::uuid and r.status = 'pending' and r.on_timeout is not null
        and r.escalated_at is null and not r.deadline_from_team
      group by r.requested_by_type, r.on_timeout`,
  );
  const [teamWide] = await selectRows(
    tx,
    z.object({ pending: z.number() }),
    sql`select count(*)::int as pending from review_request r
      where r.tenant_id = ${tenantId}::uuid and r.status = 'pending' and r.on_timeout is not null
        and r.escalated_at is null`,
  );
  const replaced = new Map<string, DeadlinesRevisited["replaced"][number]>();
  for (const group of groups) {
    const inForce = timeoutActionInForce(
      team.decisionPolicy,
      { onTimeout: group.onTimeout, requestedBy: group.requestedByType, fromTeam: false },
      team.teamOnTimeout,
    );
    if (!inForce.replaced) continue;
    await tx.execute(
      sql`update review_request set on_timeout = ${inForce.onTimeout},
          on_timeout_replaced = coalesce(on_timeout_replaced, on_timeout)
        where tenant_id = ${tenantId}::uuid and status = 'pending' and escalated_at is null
          and not deadline_from_team and requested_by_type = ${group.requestedByType}
          and on_timeout = ${group.onTimeout}`,
    );
    const key = `${group.onTimeout}>${inForce.onTimeout}`;
    const entry = replaced.get(key) ?? { from: group.onTimeout, to: inForce.onTimeout, reviews: 0 };
    entry.reviews += group.reviews;
    replaced.set(key, entry);
  }
  return { pending: teamWide?.pending ?? 0, replaced: [...replaced.values()] };
}
