/**
 * submit_step_result's locked read, when the one-statement submit could not
 * take the result: locks the plan row, then the step row (the step's lookup
 * needs the locked plan's id, so PostgreSQL takes them in that order), and
 * reads what the engine needs (`planSnapshotColumns`) with the plan's wait on
 * a fired add_steps and its pause.
 *
 * A statement sees the data as of its start, which may be before it got the
 * lock. Every call that changes a plan's steps under its lock also
 * updates the plan row, so when the locked plan row is still the one the
 * statement's snapshot holds (`fresh`), the reads are current, and one
 * statement does it all. Otherwise the snapshot columns are null and the
 * caller reads them again (`readPlanSnapshot`) in a statement that starts
 * after the lock.
 */
import "server-only";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { isoTime, run, statement } from "../../db/statement";
import { PLAN_STATUSES, STEP_TYPES } from "../../plan-engine/states";
import type { ServiceContext } from "../shared/context";
import { awaitingStepsOutput, pauseReasonOutput } from "../shared/output-fields";
import { LOCKED_PLAN_IS_CURRENT, lockedPlanCte, PLAN_LOCK, STEP_OF_LOCKED_PLAN } from "./plan-lock";
import { planSnapshotColumns, planSnapshotRow } from "./read-plan-snapshot";

const lockForSubmit = statement(
  "lock a plan and step for a submit",
  `with ${lockedPlanCte("id, status, awaiting_steps, pause_reason", PLAN_LOCK.change)}, step as materialized (
    select id, step_order, step_type, started_at, output_schema from plan_step
    where ${STEP_OF_LOCKED_PLAN}
    for update
  ), fresh as materialized (select ${LOCKED_PLAN_IS_CURRENT} as ok from plan)
  select plan.id as "planId", plan.status as "planStatus",
    plan.awaiting_steps as "awaitingSteps", plan.pause_reason as "pauseReason",
    step.id as "stepId", step.step_order as "stepOrder", step.step_type as "stepType",
    step.started_at as "startedAt", step.output_schema as "outputSchema",
    fresh.ok as fresh, snapshot.steps, snapshot."pendingReviews", snapshot.conditions
  from plan cross join fresh left join step on true
    left join lateral (select ${planSnapshotColumns("plan.id", "$2::uuid")} where fresh.ok)
      as snapshot on true`,
  z.object({
    planId: z.string(),
    planStatus: z.enum(PLAN_STATUSES),
    awaitingSteps: awaitingStepsOutput.nullable(),
    pauseReason: pauseReasonOutput.nullable(),
    stepId: z.string().nullable(),
    stepOrder: z.number().nullable(),
    stepType: z.enum(STEP_TYPES).nullable(),
    startedAt: isoTime.nullable(),
    outputSchema: z.record(z.string(), z.unknown()).nullable(),
    fresh: z.boolean(),
    steps: planSnapshotRow.shape.steps.nullable(),
    pendingReviews: planSnapshotRow.shape.pendingReviews.nullable(),
    conditions: planSnapshotRow.shape.conditions.nullable(),
  }),
);

export type LockedForSubmit = z.infer<typeof lockForSubmit.row>;

/** Undefined when the plan does not exist for the tenant. */
export async function lockPlanForSubmit(
  tx: Transaction,
  ctx: ServiceContext,
  planId: string,
  stepId: string,
): Promise<LockedForSubmit | undefined> {
  const [row] = await run(tx, lockForSubmit, [planId, ctx.tenantId, stepId]);
  return row;
}
