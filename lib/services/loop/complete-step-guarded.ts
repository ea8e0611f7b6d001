/**
 * The common submit as one fixed statement, so one round trip and no
 * BEGIN/COMMIT: the engine decided it ahead (`decideCommonSubmit`), and the
 * statement locks the plan, then the step, checks the engine's preconditions,
 * picks the plan's next status from the stored steps (the engine's three
 * cases), and writes the step, the plan, the conditions' verdicts,
 * plan.completed / plan.failed and the audit rows only if every precondition
 * held. The step's branching conditions are one of them: stored as the
 * engine decided on them (none, on the first try). When only they differ, the
 * statement answers them, the engine decides on them, and, unless one fires
 * an action that changes the plan, the statement is sent again with them:
 * two round trips for a step with conditions. No row `ok` otherwise: the
 * caller then decides on a full snapshot. A step with an outputSchema or of
 * type `checkpoint` always takes that path, where the schema and who may pass
 * a checkpoint are checked.
 *
 * The plan is locked as `PLAN_LOCK.commonSubmit`: claims pass it, another
 * submit or a change waits for it. A statement reads the steps as of its
 * start, so it must not wait for the plan's lock (it would read them from
 * before the holder's change): it skips a plan another submit or a change
 * holds, and the submit is then sent again behind a statement of its own that
 * waits for the lock, both in one call (`statementAfter`). Before, such a submit
 * took the full path, whose transaction holds the plan while Node reads and
 * decides; with 8 agents on one plan nearly every submit did
 * (docs/performance.md, "A submit behind another call").
 */
import "server-only";
import { z } from "zod";
import type { Database } from "../../db/client";
import {
  jsonParam,
  run,
  runAfter,
  sqlLiterals,
  statement,
  statementAfter,
} from "../../db/statement";
import type { LoopCondition } from "../../plan-engine/plan-snapshot";
import { PLAN_STATUSES, TERMINAL_PLAN_STATUSES } from "../../plan-engine/states";
import type { decideCommonSubmit } from "../../plan-engine/submit";
import { transitionStep } from "../../plan-engine/transitions";
import { planStatusEventCte } from "../notifications/events";
import { auditRows, auditRowsInsert } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { planActivityAt, verdictsUpdate } from "./completion-effects";
import { notHeldByCheckpoint, openStep } from "./leases";
import { LOCKED_PLAN_IS_CURRENT, lockedPlanCte, PLAN_LOCK, STEP_OF_LOCKED_PLAN } from "./plan-lock";
import { conditionFields, loopConditionRow } from "./read-plan-snapshot";

/**
 * The statement's text. `withVerdicts`: whether it writes the conditions'
 * verdicts (`$17`). The engine knows before it sends the statement whether it
 * decided any, and most steps have no condition: without verdicts to write,
 * the text has no update of the conditions, so PostgreSQL sets none up (an
 * update of a table with three indexes, opened and locked on every
 * execution, PostgreSQL's executor start-up being as costly as the run of
 * the whole statement: docs/performance.md).
 */
const guardedSubmitText = (
  lock: typeof PLAN_LOCK.commonSubmit | `${typeof PLAN_LOCK.commonSubmit} skip locked`,
  withVerdicts: boolean,
) => `
  with ${lockedPlanCte("id, status, awaiting_steps, pause_reason", lock)}, step as materialized (
    select id, step_order, status, step_type, output_schema from plan_step
    where ${STEP_OF_LOCKED_PLAN}
    for update
  ), eligible as materialized (
    select step.step_order,
      case
        when exists (select 1 from plan_step other where other.plan_id = plan.id
          and other.status = 'awaiting_input' and other.id <> step.id) then $4::text
        when not exists (select 1 from plan_step other where other.plan_id = plan.id
          and ${openStep("other")} and other.id <> step.id) then $5::text
        else $6::text
      end::plan_status as plan_status
    from plan join step on true
    where ${LOCKED_PLAN_IS_CURRENT}
      and plan.status = $7::plan_status and plan.awaiting_steps is null
      and plan.pause_reason is null
      and step.status = $8::step_status and step.output_schema is null
      and step.step_type <> 'checkpoint'
      and ${notHeldByCheckpoint("$1::uuid", "step.step_order")}
  ), stored_conditions as materialized (
    select to_jsonb(array(select jsonb_build_object(${conditionFields("c")})
      from plan_branching_condition c
      where c.after_step_id = $3::uuid and exists (select 1 from eligible)
      order by c.position)) as list
  ), decided as materialized (
    select eligible.* from eligible, stored_conditions where stored_conditions.list = $16::jsonb
  ),${
    withVerdicts
      ? ` verdicts as (
    ${verdictsUpdate("$14::timestamptz", "$17::jsonb", " and c.after_step_id = $3::uuid and exists (select 1 from decided)")}
  ),`
      : ""
  } step_update as (
    update plan_step set status = '${transitionStep("in_progress", "completed")}',
      result = $9::jsonb, result_summary = $10::text, confidence = $11::float8,
      step_execution_report = $12::jsonb, output_formatting_notes = $13::text,
      completed_at = $14::timestamptz, lease_expires_at = null,
      attempt = greatest(attempt, 1), updated_at = $14::timestamptz
    where id = $3::uuid and exists (select 1 from decided)
  ), plan_update as (
    update research_plan set status = decided.plan_status,
      updated_at = ${planActivityAt("$14::timestamptz", "decided.plan_status")},
      completed_at = case when decided.plan_status::text in (${sqlLiterals(TERMINAL_PLAN_STATUSES)})
        then $14::timestamptz else completed_at end
    from decided
    where research_plan.id = $1::uuid
  ), plan_event as (
    ${planStatusEventCte("$1::uuid", "decided.plan_status::text", ", decided")}
  ), audit as (
    ${auditRowsInsert("$15::jsonb", "r.payload || jsonb_build_object('stepOrder', (select step_order from decided))")}
    where exists (select 1 from decided)
  )
  select decided.step_order is not null as ok,
    exists (select 1 from plan where ${LOCKED_PLAN_IS_CURRENT}) as "planHeld",
    decided.plan_status as "planStatus", decided.step_order as "stepOrder",
    case when decided.step_order is null then (select list from stored_conditions)
      end as conditions
  from (select) as one left join decided on true`;

const guardedSubmitRow = z.object({
  ok: z.boolean(),
  /** The plan locked, and current: `ok` is then the preconditions' answer. */
  planHeld: z.boolean(),
  planStatus: z.enum(PLAN_STATUSES).nullable(),
  stepOrder: z.number().nullable(),
  /**
   * When nothing was written: the step's stored conditions, if every other
   * precondition held (an empty list otherwise), for the engine to decide on.
   */
  conditions: z.array(loopConditionRow).nullable(),
});

/** The plan's lock for a submit behind another call, one statement for both kinds of submit. */
const lockForSubmit = statement(
  "lock a plan for a submit behind another call",
  `with ${lockedPlanCte("id", PLAN_LOCK.commonSubmit)} select true as locked from plan`,
  z.object({ locked: z.boolean() }),
);

/**
 * The two statements of a submit, with or without the conditions' verdicts
 * (`guardedSubmitText`).
 *
 * `unlessBusy`, the first try: one statement that locks the plan only if no
 * other submit or change holds it (claims do not count). A statement reads as
 * of its start, so one that waited for the plan's lock would read the steps
 * from before the holder's change and find its plan not current; it does not
 * wait.
 *
 * `afterLock`, when the plan was busy (or changed as the first try started):
 * its lock taken by a statement of its own, and the submit after it, which
 * then reads the steps as the lock holder left them, both in one call
 * (`statementAfter`).
 */
function guardedSubmitStatements(withVerdicts: boolean) {
  const name = withVerdicts
    ? "complete a step and its conditions' verdicts in one statement"
    : "complete a step in one statement";
  return {
    unlessBusy: statement(
      name,
      guardedSubmitText(`${PLAN_LOCK.commonSubmit} skip locked`, withVerdicts),
      guardedSubmitRow,
    ),
    afterLock: statementAfter(
      lockForSubmit,
      statement(
        `${name}, the plan locked`,
        guardedSubmitText(PLAN_LOCK.commonSubmit, withVerdicts),
        guardedSubmitRow,
      ),
    ),
  };
}

const GUARDED_SUBMIT = guardedSubmitStatements(false);
const GUARDED_SUBMIT_WITH_VERDICTS = guardedSubmitStatements(true);

export type GuardedSubmit = {
  planId: string;
  stepId: string;
  result: Record<string, unknown>;
  resultSummary: string | null;
  confidence: number | null;
  stepExecutionReport: unknown;
  outputFormattingNotes: string | null;
};

/**
 * The plan's new status and the step's order; or, when only the step's
 * branching conditions differed from those the engine decided on, the stored
 * ones (`conditions`), for the engine to decide again; or undefined when
 * another precondition failed.
 */
export async function completeStepGuarded(
  db: Database,
  ctx: ServiceContext,
  input: GuardedSubmit,
  decided: NonNullable<ReturnType<typeof decideCommonSubmit>>,
  now: string,
): Promise<
  | { planStatus: (typeof PLAN_STATUSES)[number]; stepOrder: number }
  | { conditions: LoopCondition[] }
  | undefined
> {
  const { planStatusWhen: when, preconditions: pre } = decided;
  const params = [
    input.planId,
    ctx.tenantId,
    input.stepId,
    when.othersAwaitInput,
    when.othersAllTerminal,
    when.otherwise,
    pre.planStatus,
    pre.stepStatus,
    jsonParam(input.result),
    input.resultSummary,
    input.confidence,
    jsonParam(input.stepExecutionReport),
    input.outputFormattingNotes,
    now,
    jsonParam(auditRows(ctx, decided.audit)),
    jsonParam(pre.conditions),
  ];
  const withVerdicts = decided.verdicts.length > 0;
  const { unlessBusy, afterLock } = withVerdicts ? GUARDED_SUBMIT_WITH_VERDICTS : GUARDED_SUBMIT;
  if (withVerdicts) params.push(jsonParam(decided.verdicts));
  let [row] = await run(db, unlessBusy, params);
  if (row && !row.ok && !row.planHeld) {
    [row] = await runAfter(db, afterLock, [input.planId, ctx.tenantId], params);
  }
  if (row?.ok && row.planStatus !== null && row.stepOrder !== null) {
    return { planStatus: row.planStatus, stepOrder: row.stepOrder };
  }
  const stored = row?.conditions ?? [];
  return stored.length > 0 ? { conditions: stored } : undefined;
}
