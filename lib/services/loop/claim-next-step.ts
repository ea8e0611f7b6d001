/**
 * get_next_step's hot path as one fixed statement, so one round trip and no
 * BEGIN/COMMIT: lock the plan row for a claim (`PLAN_LOCK.claim`: side by
 * side with other claims and with common submits; the plan first, as
 * everywhere; a plan the snapshot finds finished is read, not locked), claim
 * its first free step (`claimableStep`) if the plan is `executing` and not
 * paused, write the step_started audit row, count the
 * plan's steps, and report the plan's review deadlines (`deadlineStateColumns`:
 * a due review is applied by the caller, which then claims again), and for a
 * completed plan what its answer is built from (`COMPLETED_PLAN_READ`). The
 * statement is atomic on its own, so the claim and its audit row commit
 * together. A plan in any other status claims nothing here and only reports its
 * status: a `planning` one is started by the second statement below
 * (`startAndClaim`, which locks it as a change does), and every other case is
 * the caller's transaction's (`claim-step.ts`).
 *
 * A statement reads the steps as of its start. If a call that changes the plan
 * (a review, modify, the full submit path: they lock it with `PLAN_LOCK.change`
 * and then update its row) committed while this one waited for the lock, or
 * just before it took the lock, the locked plan row is newer than the one the
 * statement's snapshot holds; then it claims nothing and answers `current:
 * false` (with the plan as locked, which is current, or as the snapshot held
 * it when the lock found it no longer open). A common submit that
 * committed meanwhile is neither waited for nor seen: the claim is then as if
 * it had come first (`PLAN_LOCK`).
 */
import "server-only";
import { z } from "zod";
import type { Executor } from "../../db/client";
import {
  isoTime,
  readWhenNeeded,
  run,
  type Statement,
  sqlLiterals,
  statement,
} from "../../db/statement";
import { HANDED_OUT_STATUS } from "../../plan-engine/claims";
import {
  PLAN_STATUSES,
  type PlanStatus,
  STEP_TYPES,
  TERMINAL_PLAN_STATUSES,
} from "../../plan-engine/states";
import { transitionPlan } from "../../plan-engine/transitions";
import { planStatusEventCte } from "../notifications/events";
import { deadlineStateColumns, deadlineStateRow } from "../reviews/deadline-state";
import type { ServiceContext } from "../shared/context";
import { claimableStep, leaseSeconds, leaseUntil, notHeldByCheckpoint, openStep } from "./leases";
import { lockedPlanCte, PLAN_LOCK, planOfTenant } from "./plan-lock";

/** The claimed step's columns, shared with `claim-step.ts`. */
export const claimedStepRow = z.object({
  inputs: z.record(z.string(), z.unknown()).nullable(),
  stepId: z.string().nullable(),
  stepOrder: z.number().nullable(),
  stepType: z.enum(STEP_TYPES).nullable(),
  instructions: z.string().nullable(),
  attempt: z.number().nullable(),
  leaseExpiresAt: isoTime.nullable(),
  totalSteps: z.number(),
  serverNext: z.boolean(),
});
export type ClaimedStep = z.infer<typeof claimedStepRow>;

/**
 * What a completed plan's answer is built from, as one JSON value (SQL text
 * over the plan `$1` and the tenant `$2`): its skill execution's metadata
 * (the output's format), the formatting notes of its completed steps and
 * which steps failed. The claim reads it with the plan's status when its
 * snapshot is current, so the get_next_step that finds the plan complete
 * answers without another round trip. It needs no lock: the statement writes
 * nothing on a finished plan and answers it as one snapshot held it (a
 * completed plan re-opened afterwards by retry_step is the next call's).
 */
export const COMPLETED_PLAN_READ = `json_build_object(
    'metadata', (select metadata from skill_execution
      where plan_id = $1::uuid and tenant_id = $2::uuid
      order by created_at desc limit 1),
    'notes', coalesce((select json_agg(json_build_object(
        'stepId', id, 'stepOrder', step_order, 'notes', output_formatting_notes) order by step_order)
      from plan_step where plan_id = $1::uuid and tenant_id = $2::uuid
        and status = 'completed' and output_formatting_notes is not null), '[]'::json),
    'failed', coalesce((select json_agg(step_order order by step_order)
      from plan_step where plan_id = $1::uuid and tenant_id = $2::uuid
        and status = 'failed'), '[]'::json))`;

export const completedPlanRead = z.object({
  metadata: z.record(z.string(), z.unknown()).nullable(),
  notes: z.array(z.object({ stepId: z.string(), stepOrder: z.number(), notes: z.string() })),
  failed: z.array(z.number()),
});
export type CompletedPlanRead = z.infer<typeof completedPlanRead>;

/**
 * The claim's CTEs (`next`, `claimed`, `audit`) for the plan `plan` (the plan
 * `$1`, or null when the caller's tests found it closed to claims), the
 * tenant `$2`, the time `$3`, the lease `$4` seconds, the actor `$5`-`$7`, and
 * the plan's status before the claim `planStatusBefore` (SQL expressions):
 * the first free step, locked with SKIP LOCKED so two callers never get the
 * same one, handed out with a new lease and attempt, and its `step_started`
 * row. The bound of undecided checkpoints reads the plan `$1` itself: with
 * `plan` null no step is a candidate, and its own copy of the caller's tests
 * was three more plan nodes to set up. Text, shared with `claim-step.ts`.
 */
export function claimCtes(plan: string, planStatusBefore: string): string {
  return `next as (
      select id, status, lease_expires_at, tool from plan_step s
      where plan_id = ${plan} and tenant_id = $2::uuid and ${openStep("s")}
        and ${claimableStep("s", "$3::timestamptz")}
        and ${notHeldByCheckpoint("$1::uuid", "s.step_order")}
      order by step_order
      limit 1
      for update skip locked
    ), claimed as (
      update plan_step
      set status = '${HANDED_OUT_STATUS}', attempt = plan_step.attempt + 1,
        lease_expires_at = ${leaseUntil("$3::timestamptz", "$4::int")},
        started_at = $3::timestamptz, updated_at = $3::timestamptz
      from next
      where plan_step.id = next.id and next.tool is null
      returning plan_step.id, plan_step.plan_id, plan_step.step_order, plan_step.inputs,
        plan_step.step_type, plan_step.instructions, plan_step.attempt, plan_step.lease_expires_at,
        case when next.status = 'pending' then null
          when next.lease_expires_at is null then 'redo_requested'
          else 'lease_expired' end as reissued
    ), audit as (
      insert into plan_audit_log
        (tenant_id, plan_id, step_id, event_type, actor_type, actor_id, actor_label, payload)
      select $2::uuid, claimed.plan_id, claimed.id, 'step_started'::audit_event_type,
        $5::actor_type, $6::uuid, $7::text,
        jsonb_strip_nulls(jsonb_build_object('stepOrder', claimed.step_order,
          'planStatusBefore', ${planStatusBefore}, 'attempt', claimed.attempt,
          'reissued', claimed.reissued))
      from claimed
    )`;
}

/**
 * The claimed step's columns over `claimed` and `next`, and the plan's step
 * count: its last step's order, since a plan's steps are numbered 1 to n
 * (creation numbers them so, modify_plan renumbers them, lib/plan-engine/modify.ts
 * and modify-revert.ts, and a fork copies its source's; held after every call
 * by tests/checkpoint-invariant.test.ts). One index entry, where a count read
 * every step of the plan on every claim.
 */
export function claimedColumns(plan: string): string {
  return `claimed.inputs, claimed.id as "stepId", claimed.step_order as "stepOrder",
    claimed.step_type as "stepType", claimed.instructions, claimed.attempt,
    claimed.lease_expires_at as "leaseExpiresAt",
    coalesce((select step_order from plan_step where plan_id = ${plan}
      order by step_order desc limit 1), 0) as "totalSteps",
    exists (select 1 from next where tool is not null) as "serverNext"`;
}

/**
 * The CTEs `locked` (the plan locked in `mode`, with `columns` and its row
 * version), `plan` (the plan as the statement answers it, with `current`:
 * whether the statement's snapshot is current) and the claim's CTEs on the
 * plan when it is `status`, not paused, waiting for no steps (a fired
 * add_steps: the transaction path answers it) and current.
 *
 * `plan` joins the locked row to the row the statement's snapshot holds: the
 * snapshot's version is what `current` compares (`LOCKED_PLAN_IS_CURRENT`'s
 * test), and it is the answer when nothing was locked. One scan of the plan
 * row for both, where a union and a CTE of their own set up eight plan nodes
 * on every claim (PostgreSQL initialises every node of a cached plan on each
 * execution: docs/performance.md, "A smaller plan for the common step").
 *
 * With `finished: "read"`, a plan the statement's snapshot finds completed,
 * failed or cancelled is read, not locked: the claim hands out nothing there
 * and writes nothing, so the statement takes no transaction id and its commit
 * waits for no flush of the WAL. The lock was a write: one commit in eleven
 * of a 10-step plan's loop was the get_next_step that answers plan_complete.
 * An unlocked row is current only when it is terminal; one that the snapshot
 * holds as open but that was gone or no longer open when the lock came to it
 * (a change that finished or deleted it committed after the statement began)
 * is answered as stale, and read again. With `finished: "locked"`, the plan is
 * locked whatever its status: the start of a `planning` plan, which locks it
 * as a change does, and answers nothing when it found no row to lock.
 */
function claimOnPlan(
  columns: readonly string[],
  mode: typeof PLAN_LOCK.claim | typeof PLAN_LOCK.change,
  status: PlanStatus,
  finished: "read" | "locked",
): string {
  const terminal = `(${sqlLiterals(TERMINAL_PLAN_STATUSES)})`;
  const plan =
    finished === "locked"
      ? `plan as materialized (
    select locked.*, locked.version = snapshot.xmin as current
    from locked join research_plan snapshot on snapshot.id = $1::uuid
  )`
      : `plan as materialized (
    select ${columns
      .map((c) => `case when locked.id is null then snapshot.${c} else locked.${c} end as ${c}`)
      .join(",\n      ")},
      case when locked.id is null then snapshot.status::text in ${terminal}
        else locked.version = snapshot.xmin end as current
    from research_plan snapshot left join locked on true
    where ${planOfTenant("snapshot")}
  )`;
  return `${lockedPlanCte(columns.join(", "), mode, {
    name: "locked",
    also: finished === "read" ? ` and status::text not in ${terminal}` : "",
  })}, ${plan},
  ${claimCtes(
    `(select id from plan where status = '${status}' and pause_reason is null and awaiting_steps is null and current)`,
    `'${status}'::text`,
  )}`;
}

const claimNext = statement(
  "claim the next step of an executing plan",
  `with ${claimOnPlan(["id", "status", "output_formatting_notes", "pause_reason", "awaiting_steps"], PLAN_LOCK.claim, "executing", "read")}
  select plan.status as "planStatus", plan.output_formatting_notes as "planFormattingNotes",
    ${claimedColumns("plan.id")},
    plan.current, plan.pause_reason is not null as paused,
    case when plan.status = 'completed' and plan.current
      then ${readWhenNeeded(`select ${COMPLETED_PLAN_READ}`, ["$1::uuid", "$2::uuid"])}
      end as "completedRead",
    ${deadlineStateColumns("$1::uuid", "$2::uuid")}
  from plan left join claimed on true`,
  claimedStepRow.extend({
    planStatus: z.enum(PLAN_STATUSES),
    planFormattingNotes: z.string().nullable(),
    current: z.boolean(),
    paused: z.boolean(),
    completedRead: completedPlanRead.nullable(),
    ...deadlineStateRow.shape,
  }),
);

export type ClaimNextRow = z.infer<typeof claimNext.row>;

/** The parameters $1-$7 of the claim's CTEs (`claimCtes`). */
export function claimParams(ctx: ServiceContext, planId: string, now: string): unknown[] {
  return [
    planId,
    ctx.tenantId,
    now,
    leaseSeconds(ctx),
    ctx.actor.type,
    ctx.actor.id,
    ctx.actor.label,
  ];
}

/** The first row of a claim statement; undefined when the plan does not exist for the tenant. */
async function firstRow<Row>(
  stmt: Statement<Row>,
  db: Executor,
  ctx: ServiceContext,
  planId: string,
  now: string,
): Promise<Row | undefined> {
  const [row] = await run(db, stmt, claimParams(ctx, planId, now));
  return row;
}

/** The claim on an executing plan. */
export const claimNextStep = (db: Executor, ctx: ServiceContext, planId: string, now: string) =>
  firstRow(claimNext, db, ctx, planId, now);

/**
 * A plan's first hand-out as one statement, after the claim above found it
 * `planning`: the plan locked exclusively (a statement of its own, so no
 * caller upgrades a share lock another also holds), its first free step
 * claimed with the same CTEs, and the plan moved to `executing` with the
 * claim, the move's outbox event included. It claims nothing, and changes
 * nothing, when the plan is no longer `planning`, is paused or waits for
 * steps, has a server step next, or changed while the statement waited for
 * its lock; the caller then takes get_next_step's transaction, as every plan
 * did before (docs/performance.md, "Fewer round trips a plan").
 */
const EXECUTING = transitionPlan("planning", "executing");
const startAndClaim = statement(
  "start a planning plan with its first step's claim",
  `with ${claimOnPlan(["id", "status", "pause_reason", "awaiting_steps"], PLAN_LOCK.change, "planning", "locked")}
  , started as (
    update research_plan set status = '${EXECUTING}', updated_at = $3::timestamptz
    from claimed where research_plan.id = claimed.plan_id
  ), started_event as (
    ${planStatusEventCte("$1::uuid", `'${EXECUTING}'::text`, ", claimed")}
  )
  select ${claimedColumns("plan.id")}
  from plan left join claimed on true`,
  claimedStepRow,
);

/** The start of a planning plan: a row without a step when it was not started. */
export const startAndClaimStep = (db: Executor, ctx: ServiceContext, planId: string, now: string) =>
  firstRow(startAndClaim, db, ctx, planId, now);
