/**
 * The writes of a step's completion effects (`CompletionEffects` of the engine)
 * as the data-modifying CTEs of one statement: condition verdicts, skipped
 * steps, withdrawn reviews and the plan row. submit_step_result and a review
 * decision end their one write statement with these and the audit insert.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import type { CompletionEffects } from "../../plan-engine/loop";
import { isTerminalPlanStatus, transitionStep } from "../../plan-engine/transitions";
import { decidedPlanEndedCte, planEndedCte } from "../notifications/plan-events";

const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/**
 * `stepId`: the step that moved; a pause of the plan's server-run steps on it
 * ends (get_next_step decides again whether the plan can go on).
 */
export function loopEffectsSql(
  planId: string,
  stepId: string,
  effects: CompletionEffects,
  now: string,
): SQL[] {
  const parts: SQL[] = [];
  if (effects.verdicts.length > 0) {
    parts.push(sql`verdicts as (
      update plan_branching_condition c set evaluated_at = ${now}::timestamptz, fired = v.fired
      from jsonb_to_recordset(${json(effects.verdicts)}) as v(id uuid, fired boolean)
      where c.id = v.id
    )`);
  }
  if (effects.skippedStepIds.length > 0) {
    // The skip set never includes the completed step (only steps after it), so
    // no row is changed twice by the statement; only a pending step is skipped.
    parts.push(sql`skips as (
      update plan_step set status = ${transitionStep("pending", "skipped")}::step_status,
        updated_at = ${now}::timestamptz
      where id in (select value::uuid from jsonb_array_elements_text(${json(effects.skippedStepIds)}))
        and status = 'pending'
    )`);
  }
  if (effects.withdrawnReviewIds.length > 0) {
    parts.push(sql`withdrawn as (
      update review_request set status = 'withdrawn', decided_at = ${now}::timestamptz
      where id in (select value::uuid from jsonb_array_elements_text(${json(effects.withdrawnReviewIds)}))
        and status = 'pending'
    )`);
  }
  parts.push(sql`plan_update as (
    update research_plan set status = ${effects.planStatus}::plan_status,
      awaiting_steps = ${effects.awaitingSteps ? json(effects.awaitingSteps) : sql`null::jsonb`},
      pause_reason = case when pause_reason->>'stepId' = ${stepId}::text then null
        else pause_reason end,
      updated_at = ${now}::timestamptz,
      completed_at = case when ${isTerminalPlanStatus(effects.planStatus)}::boolean
        then ${now}::timestamptz else completed_at end
    where id = ${planId}::uuid
  )`);
  parts.push(...planEndedCte(planId, effects.planStatus));
  return parts;
}

type StatusCases = { othersAwaitInput: string; othersAllTerminal: string; otherwise: string };

/**
 * For a guarded one-statement write (decideCommonSubmit):
 * the plan's next status, picked from the engine's three cases by the other
 * steps of the plan, aggregated over a relation `other` of plan_step rows.
 */
export function planStatusFromOthers(when: StatusCases, terminal: readonly string[]): SQL {
  const terminalList = sql.join(
    terminal.map((status) => sql`${status}::step_status`),
    sql`, `,
  );
  return sql`case
      when bool_or(other.status = 'awaiting_input') then ${when.othersAwaitInput}
      when coalesce(bool_and(other.status in (${terminalList})), true) then ${when.othersAllTerminal}
      else ${when.otherwise}
    end::plan_status`;
}

/**
 * The plan row's update in a guarded write: only when the statement's `decided`
 * relation has a row; with plan.completed or plan.failed queued when it ends
 * the plan (the caller calls noteNotificationQueued when its answer says so).
 */
export function decidedPlanUpdate(planId: string, now: string): SQL {
  return sql`plan_update as (
      update research_plan set status = decided.plan_status, updated_at = ${now}::timestamptz,
        completed_at = case when decided.plan_status in ('completed', 'failed')
          then ${now}::timestamptz else completed_at end
      from decided
      where research_plan.id = ${planId}::uuid
    ), ${decidedPlanEndedCte(planId)}`;
}
