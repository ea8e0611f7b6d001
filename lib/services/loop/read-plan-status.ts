/**
 * get_plan_status's read as one fixed statement: the plan row, its steps
 * without their results (what progress and stalls need; their times only for
 * steps in progress), its fork links
 * (`forkLinksColumns`) and its review deadlines (`deadlineStateColumns`), so
 * the common call is one round trip.
 */
import "server-only";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { isoTime, run, statement } from "../../db/statement";
import { HANDED_OUT_STATUS } from "../../plan-engine/claims";
import { PLAN_STATUSES, STEP_STATUSES, STEP_TYPES } from "../../plan-engine/states";
import { forkLinksColumns, forkLinksOutput } from "../plans/fork-links";
import { deadlineStateColumns, deadlineStateRow } from "../reviews/deadline-state";
import type { ServiceContext } from "../shared/context";
import { cancellationOutput, pauseReasonOutput } from "../shared/output-fields";
import { planOfTenant } from "./plan-lock";

/** A time inside a JSON column (timestamptz as JSON text), as a Date. */
const jsonTime = z
  .string()
  .nullable()
  .transform((value) => (value === null ? null : new Date(value)));

/**
 * A step's times, which only a step in progress has a use for: a stall
 * warning measures its lease and its last write, and the plan card tells a
 * sent-back one by its missing lease (lib/plan-engine/progress.ts). The rest
 * of a step comes from the plan-order index alone
 * (drizzle/0043_steps_status_in_plan_order_index.sql), so the read of a plan
 * at rest touches none of its steps' rows, which its updates spread one to a
 * page; a step in progress is read from its row, by its key.
 */
const NOT_IN_PROGRESS = JSON.stringify({ startedAt: null, leaseExpiresAt: null, updatedAt: null });

export const readStatus = statement(
  "read a plan's status",
  `select p.id, p.name, p.status, p.pause_reason as "pauseReason", p.cancellation,
    p.updated_at as "updatedAt",
    coalesce((select jsonb_agg(jsonb_build_object('id', s.id, 'stepOrder', s.step_order,
        'stepType', s.step_type, 'status', s.status)
        || coalesce(case when s.status = '${HANDED_OUT_STATUS}' then (
          select jsonb_build_object('startedAt', x.started_at,
            'leaseExpiresAt', x.lease_expires_at, 'updatedAt', x.updated_at)
          from plan_step x where x.id = s.id) end, '${NOT_IN_PROGRESS}'::jsonb)
        order by s.step_order)
      from plan_step s where s.plan_id = p.id and s.tenant_id = $2::uuid), '[]'::jsonb) as steps,
    ${forkLinksColumns("$2::uuid")},
    ${deadlineStateColumns("$1::uuid", "$2::uuid")}
  from research_plan p
  where ${planOfTenant("p")}`,
  z.object({
    id: z.string(),
    name: z.string(),
    status: z.enum(PLAN_STATUSES),
    pauseReason: pauseReasonOutput.nullable(),
    cancellation: cancellationOutput.nullable(),
    updatedAt: isoTime,
    steps: z.array(
      z.object({
        id: z.string(),
        stepOrder: z.number(),
        stepType: z.enum(STEP_TYPES),
        status: z.enum(STEP_STATUSES),
        startedAt: jsonTime,
        leaseExpiresAt: jsonTime,
        updatedAt: jsonTime,
      }),
    ),
    ...forkLinksOutput.shape,
    ...deadlineStateRow.shape,
  }),
);

/** A step's `startedAt`, `leaseExpiresAt` and `updatedAt` are read for a step in progress only, null for the others. */
export type PlanStatusRead = z.infer<typeof readStatus.row>;

/** Undefined when the plan does not exist for the tenant. */
export async function readPlanStatus(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
): Promise<PlanStatusRead | undefined> {
  const [row] = await run(db, readStatus, [planId, ctx.tenantId]);
  return row;
}
