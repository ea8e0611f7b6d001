/**
 * The steps a value's bindings name (docs/protocol.md, "Bindings"), and the
 * one read of them. A run of server steps and a handed-out step's inputs read
 * only the results their bindings name, never every step's: a plan holds up
 * to 200 results of 128 KB.
 */
import "server-only";
import { z } from "zod";
import { findBindings } from "../../plan-engine/bindings";
import { STEP_STATUSES } from "../../plan-engine/states";

/** The step orders the bindings in `values` name, by the engine's one grammar. */
export function boundStepOrders(values: readonly unknown[]): Set<number> {
  const orders = new Set<number>();
  for (const value of values) {
    for (const binding of findBindings(value).bindings) {
      if (binding.kind === "step") orders.add(binding.stepOrder);
    }
  }
  return orders;
}

/**
 * A JSON array of the steps of the plan `plan` (tenant `tenant`) whose orders
 * are in `orders`, an `int[]`, as bindings read them (`boundStepRow`): SQL
 * expressions, for the statement that embeds the read.
 */
export function boundStepsColumn(plan: string, tenant: string, orders: string): string {
  return `coalesce((select jsonb_agg(jsonb_build_object('stepId', s.id, 'stepOrder', s.step_order,
        'status', s.status, 'result', s.result, 'tool', s.tool))
      from plan_step s where s.plan_id = ${plan} and s.tenant_id = ${tenant}
        and s.step_order = any(${orders})), '[]'::jsonb)`;
}

export const boundStepRow = z.object({
  stepId: z.string(),
  stepOrder: z.number(),
  status: z.enum(STEP_STATUSES),
  result: z.unknown(),
  tool: z.string().nullable(),
});
