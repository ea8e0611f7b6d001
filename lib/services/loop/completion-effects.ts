/**
 * The writes of a step's completion (`CompletionEffects` of the engine) and
 * their audit rows, as the tail of one fixed statement: condition verdicts,
 * skipped steps, withdrawn reviews (withdraw-on-end: the engine's
 * `withdrawOnEnd` decides which), the plan row, plan.completed / plan.failed in
 * the outbox, and the audit insert. Its three writers, submit_step_result's
 * decided path (`complete-step.ts`), a review decision (`decide-review.ts`) and
 * a run of server steps (`run-server-steps.ts`), each put their own CTEs in
 * front and share these, so a plan's status after a step is written in one
 * place; a run of server steps takes the audit insert as a CTE of its own,
 * whose rows its steps' update joins. Every CTE is always there (an empty
 * list changes nothing), so each writer's text is fixed.
 *
 * Parameters $1-$11 (`effectsParams`); a writer's own ones start at $12.
 */
import "server-only";
import { jsonParam, sqlLiterals } from "../../db/statement";
import type { AuditEntry } from "../../plan-engine/audit-entries";
import type { PauseReason } from "../../plan-engine/bindings";
import type { CompletionEffects } from "../../plan-engine/completion";
import { TERMINAL_PLAN_STATUSES } from "../../plan-engine/states";
import { transitionStep } from "../../plan-engine/transitions";
import { planStatusEvent, planStatusEventCte } from "../notifications/events";
import { noteNotificationQueued } from "../notifications/queued";
import { auditRows, auditRowsInsert } from "../shared/audit";
import type { ServiceContext } from "../shared/context";

/**
 * The conditions' verdicts written (SQL expressions: the time `now`, the
 * verdicts `verdicts` as a JSON array of { id, fired }, and `also`, more
 * conditions on the condition row `c`). Shared with the one-statement submit.
 */
export const verdictsUpdate = (now: string, verdicts: string, also = ""): string =>
  `update plan_branching_condition c set evaluated_at = ${now}, fired = v.fired
    from jsonb_to_recordset(${verdicts}) as v(id uuid, fired boolean)
    where c.id = v.id${also}`;

/**
 * The plan row's `updated_at` for a write under the plan's lock that sets its
 * status to `status`: the write's time `now`, but kept as it is when the
 * status does not change and it lies within a second of `now`. The column is
 * in two of the plan's indexes, so changing it makes the row's update write
 * an entry in each of the plan's indexes (never a HOT update): 4-5 of a
 * step's B-tree entries, on every submit of a step (docs/performance.md,
 * "A plan's activity time kept within a second"). The cost: the lists by
 * latest activity (list_active_plans, the plans page) may order two plans
 * active in the same second either way, and the time they show may be up to
 * a second early. A change of status always takes `now`, since it cannot be
 * HOT and the status lists date it. The row's version (`xmin`), which the
 * loop's statements compare (`plan-lock.ts`), moves on every update. Within
 * a second after `now` too: a submit behind another call's lock writes the
 * time it took before the wait, which would move the holder's back.
 */
export const planActivityAt = (now: string, status: string): string =>
  `case when research_plan.status::text = (${status})::text
      and research_plan.updated_at between ${now} - interval '1 second' and ${now} + interval '1 second'
    then research_plan.updated_at else ${now} end`;

export const completionEffectsCtes = `verdicts as (
    ${verdictsUpdate("$3::timestamptz", "$4::jsonb")}
  ), skips as (
    update plan_step set status = '${transitionStep("pending", "skipped")}', updated_at = $3::timestamptz
    where id in (select value::uuid from jsonb_array_elements_text($5::jsonb))
      and status = 'pending'
  ), withdrawn as (
    update review_request set status = 'withdrawn', decided_at = $3::timestamptz
    where id in (select value::uuid from jsonb_array_elements_text($6::jsonb))
      and status = 'pending'
  ), plan_event as (${planStatusEventCte("$1::uuid", "$7::text")}), plan_update as (
    update research_plan set status = $7::plan_status, awaiting_steps = $8::jsonb,
      pause_reason = case when $10::boolean then $9::jsonb
        when pause_reason->>'stepId' = $2::text then null
        else pause_reason end,
      updated_at = ${planActivityAt("$3::timestamptz", "$7::text")},
      completed_at = case when $7::text in (${sqlLiterals(TERMINAL_PLAN_STATUSES)})
        then $3::timestamptz else completed_at end
    where id = $1::uuid
  )`;

/**
 * The audit rows' insert, which ends the statement or, in a run of server
 * steps, is its CTE (the rows travel as one JSON parameter, $11).
 */
export const completionAuditInsert = auditRowsInsert("$11::jsonb");

/**
 * The parameters $1-$11. `stepId`: the step that moved; a pause of the plan's
 * server-run steps on it ends. `pause`: set by a run of server steps (null
 * ends the pause); left out, the pause stays unless it was on `stepId`.
 */
export function effectsParams(
  ctx: ServiceContext,
  planId: string,
  stepId: string | null,
  effects: Pick<
    CompletionEffects,
    "verdicts" | "skippedStepIds" | "withdrawnReviewIds" | "planStatus" | "awaitingSteps"
  > & { audit: AuditEntry[] },
  now: string,
  pause?: { reason: PauseReason | null },
): unknown[] {
  // The statement queues plan.completed or plan.failed when it ends the plan.
  if (planStatusEvent(effects.planStatus)) noteNotificationQueued();
  return [
    planId,
    stepId,
    now,
    jsonParam(effects.verdicts),
    jsonParam(effects.skippedStepIds),
    jsonParam(effects.withdrawnReviewIds),
    effects.planStatus,
    effects.awaitingSteps ? jsonParam(effects.awaitingSteps) : null,
    pause?.reason ? jsonParam(pause.reason) : null,
    pause !== undefined,
    jsonParam(auditRows(ctx, effects.audit)),
  ];
}
