/**
 * What the engine's loop decisions read of a plan the caller has locked
 * (`PlanSnapshot` less the plan row, and the branching conditions): every
 * step's status, the pending reviews and the plan's conditions in stored
 * order. One home for the three deciders that need it: submit_step_result's
 * locked path (`submit-step-result.ts`, whose locking statement embeds
 * `planSnapshotColumns`), a review decision and a run of server steps.
 */
import "server-only";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { run, statement } from "../../db/statement";
import type { LoopCondition, LoopStep } from "../../plan-engine/loop";
import { STEP_STATUSES, STEP_TYPES } from "../../plan-engine/states";

/**
 * Three columns, `steps`, `"pendingReviews"` and `conditions`, for the plan
 * `plan` of the tenant `tenant` (SQL expressions).
 */
export function planSnapshotColumns(plan: string, tenant: string): string {
  return `coalesce((select jsonb_agg(jsonb_build_object(
        'id', s.id, 'stepOrder', s.step_order, 'status', s.status, 'stepType', s.step_type)
        order by s.step_order)
      from plan_step s where s.plan_id = ${plan} and s.tenant_id = ${tenant}), '[]'::jsonb) as steps,
    coalesce((select jsonb_agg(jsonb_build_object('id', r.id, 'stepId', r.step_id))
      from review_request r
      where r.plan_id = ${plan} and r.tenant_id = ${tenant} and r.status = 'pending'),
      '[]'::jsonb) as "pendingReviews",
    coalesce((select jsonb_agg(jsonb_build_object(
        'id', c.id, 'afterStepId', c.after_step_id, 'conditionExpression', c.condition_expression,
        'ifTrueAction', c.if_true_action, 'actionParams', c.action_params) order by c.position)
      from plan_branching_condition c
      where c.plan_id = ${plan} and c.tenant_id = ${tenant}), '[]'::jsonb) as conditions`;
}

export const planSnapshotRow = z.object({
  steps: z.array(
    z.object({
      id: z.string(),
      stepOrder: z.number(),
      status: z.enum(STEP_STATUSES),
      stepType: z.enum(STEP_TYPES),
    }),
  ),
  pendingReviews: z.array(z.object({ id: z.string(), stepId: z.string() })),
  conditions: z.array(
    z.object({
      id: z.string(),
      afterStepId: z.string(),
      conditionExpression: z.string(),
      ifTrueAction: z.string(),
      actionParams: z.record(z.string(), z.unknown()),
    }),
  ),
});

export type PlanSnapshotRead = {
  steps: LoopStep[];
  pendingReviews: { id: string; stepId: string }[];
  /** The plan's conditions in stored order, each with the step it follows. */
  conditions: (LoopCondition & { afterStepId: string })[];
};

/** The conditions that follow `stepId`, in stored order. */
export function conditionsAfter(read: PlanSnapshotRead, stepId: string): LoopCondition[] {
  return read.conditions
    .filter((c) => c.afterStepId === stepId)
    .map(({ afterStepId: _, ...condition }) => condition);
}

const readSnapshot = statement(
  "read a locked plan's snapshot",
  `select ${planSnapshotColumns("$1::uuid", "$2::uuid")}`,
  planSnapshotRow,
);

export async function readPlanSnapshot(
  tx: Transaction,
  tenantId: string,
  planId: string,
): Promise<PlanSnapshotRead> {
  const [row] = await run(tx, readSnapshot, [planId, tenantId]);
  if (!row) throw new Error("The plan snapshot read returned no row.");
  return row;
}
