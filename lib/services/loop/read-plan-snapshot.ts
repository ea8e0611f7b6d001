/**
 * What the engine's loop decisions read of a plan the caller has locked
 * (`PlanSnapshot` less the plan row, and the branching conditions): every
 * step's status, the pending reviews and the plan's conditions in stored
 * order. One home for the three deciders that need it: submit_step_result's
 * locked path (`submit-step-result.ts`, whose locking statement embeds
 * `planSnapshotColumns`), a review decision and a run of server steps (which
 * reads its steps' run columns in the same statement, `readRunSnapshot`).
 */
import "server-only";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { arrayParam, isoTime, run, sqlLiterals, statement } from "../../db/statement";
import type { LoopCondition, LoopStep } from "../../plan-engine/plan-snapshot";
import { STEP_STATUSES, STEP_TYPES, TERMINAL_STEP_STATUSES } from "../../plan-engine/states";
import { isTerminalStepStatus } from "../../plan-engine/transitions";
import { boundStepOrders, boundStepRow, boundStepsColumn } from "./bound-steps";

/**
 * Three columns, `steps`, `"pendingReviews"` and `conditions`, for the plan
 * `plan` of the tenant `tenant` (SQL expressions).
 */
export function planSnapshotColumns(plan: string, tenant: string): string {
  return `coalesce((select jsonb_agg(jsonb_build_object(
        'id', s.id, 'stepOrder', s.step_order, 'status', s.status, 'stepType', s.step_type)
        order by s.step_order)
      from plan_step s where s.plan_id = ${plan} and s.tenant_id = ${tenant}), '[]'::jsonb) as steps,
    ${reviewsAndConditionsColumns(plan, tenant)}`;
}

/**
 * A branching condition `alias` as the engine reads it (`LoopCondition`), the
 * arguments of a jsonb_build_object: the plan's snapshot adds the step it
 * follows, and the one-statement submit compares a step's stored conditions
 * with the engine's (complete-step-guarded.ts).
 */
export const conditionFields = (alias: string): string =>
  `'id', ${alias}.id, 'conditionExpression', ${alias}.condition_expression,
        'ifTrueAction', ${alias}.if_true_action, 'actionParams', ${alias}.action_params`;

/** `conditionFields`' row. */
export const loopConditionRow = z.object({
  id: z.string(),
  conditionExpression: z.string(),
  ifTrueAction: z.string(),
  actionParams: z.record(z.string(), z.unknown()),
});

function reviewsAndConditionsColumns(plan: string, tenant: string): string {
  return `coalesce((select jsonb_agg(jsonb_build_object('id', r.id, 'stepId', r.step_id))
      from review_request r
      where r.plan_id = ${plan} and r.tenant_id = ${tenant} and r.status = 'pending'),
      '[]'::jsonb) as "pendingReviews",
    coalesce((select jsonb_agg(jsonb_build_object(
        'afterStepId', c.after_step_id, ${conditionFields("c")}) order by c.position)
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
  conditions: z.array(loopConditionRow.extend({ afterStepId: z.string() })),
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

const runStepRow = z.object({
  id: z.string(),
  stepOrder: z.number(),
  stepType: z.enum(STEP_TYPES),
  status: z.enum(STEP_STATUSES),
  tool: z.string().nullable(),
  arguments: z.record(z.string(), z.unknown()).nullable(),
  /** An open step's inputs, whose bindings name results to read; null on a finished step. */
  inputs: z.record(z.string(), z.unknown()).nullable(),
  outputSchema: z.record(z.string(), z.unknown()).nullable(),
  leaseExpiresAt: isoTime.nullable().transform((time) => (time === null ? null : new Date(time))),
});

/** A step of a run of server steps as the snapshot reads it: without its result. */
export type RunSnapshotStep = z.infer<typeof runStepRow>;

/** A step of a run with its result, read only when an open step binds it (else null). */
export type RunStep = RunSnapshotStep & { result: unknown };

const readRunSnapshotStatement = statement(
  "read a locked plan's snapshot for a server-step run",
  `select coalesce((select jsonb_agg(jsonb_build_object(
        'id', s.id, 'stepOrder', s.step_order, 'stepType', s.step_type, 'status', s.status,
        'tool', s.tool, 'arguments', s.arguments, 'outputSchema', s.output_schema,
        'inputs', case when s.status not in (${sqlLiterals(TERMINAL_STEP_STATUSES)}) then s.inputs end,
        'leaseExpiresAt', s.lease_expires_at)
        order by s.step_order)
      from plan_step s where s.plan_id = $1::uuid and s.tenant_id = $2::uuid), '[]'::jsonb) as steps,
    ${reviewsAndConditionsColumns("$1::uuid", "$2::uuid")}`,
  planSnapshotRow.extend({ steps: z.array(runStepRow) }),
);

const readBoundSteps = statement(
  "read the steps a server-step run's bindings name",
  `select ${boundStepsColumn("$1::uuid", "$2::uuid", "$3::int[]")} as steps`,
  z.object({ steps: z.array(boundStepRow) }),
);

/**
 * The run's steps with what running them needs (tool, arguments, output
 * schema, lease), the pending reviews and the conditions, in one read,
 * without the steps' results (`withBoundResults` adds those a run needs).
 * Every result was read here before, up to 200 of 128 KB, on each
 * get_next_step of a plan with a server step next or a pause, under the
 * plan's exclusive lock (docs/operations.md, "Work on input").
 */
export async function readRunSnapshot(
  tx: Transaction,
  tenantId: string,
  planId: string,
): Promise<Omit<PlanSnapshotRead, "steps"> & { steps: RunSnapshotStep[] }> {
  const [row] = await run(tx, readRunSnapshotStatement, [planId, tenantId]);
  if (!row) throw new Error("The plan snapshot read returned no row.");
  return row;
}

/**
 * The run's steps with the results of the completed steps that the bindings
 * of a step not yet finished name, in the arguments Cairn runs it with or the
 * inputs it is handed out with, read in one statement; none is read, and no
 * statement sent, when no open step binds a completed one. A finished step
 * neither runs nor is handed out again; a binding of a step not completed
 * resolves to no value, and a step the run completes has its result in the
 * run's memory.
 */
export async function withBoundResults(
  tx: Transaction,
  tenantId: string,
  planId: string,
  steps: readonly RunSnapshotStep[],
): Promise<RunStep[]> {
  const named = boundStepOrders(
    steps
      .filter((step) => !isTerminalStepStatus(step.status))
      .flatMap((step) => [step.arguments, step.inputs]),
  );
  const bound = steps
    .filter((step) => step.status === "completed" && named.has(step.stepOrder))
    .map((step) => String(step.stepOrder));
  if (bound.length === 0) return steps.map((step) => ({ ...step, result: null }));
  const [row] = await run(tx, readBoundSteps, [planId, tenantId, arrayParam(bound)]);
  const results = new Map(row?.steps.map((step) => [step.stepOrder, step.result]));
  return steps.map((step) => ({ ...step, result: results.get(step.stepOrder) ?? null }));
}
