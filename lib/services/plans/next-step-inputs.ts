/**
 * A ready step's inputs (docs/protocol.md, "Bindings"), resolved after the
 * claim's transaction: from the steps a run of server steps left in that
 * transaction when one ran, else from the plan as it is when the answer leaves.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { selectRows } from "../../db/rows";
import { arrayParam } from "../../db/statement";
import {
  type BindingSource,
  findBindings,
  MAX_RESOLVED_BYTES,
  resolveBindings,
} from "../../plan-engine/bindings";
import { STEP_STATUSES } from "../../plan-engine/states";
import type { ServiceContext } from "../shared/context";
import { jsonBytes } from "../shared/fields";
import type { NextStep, ReadyStep } from "./next-step-output";

export type NextStepWithInputs =
  | Exclude<NextStep, ReadyStep>
  | (ReadyStep & {
      inputsToResolve?: Record<string, unknown> | null;
      /** The steps as a run of server steps left them (the exclusive path): no second read. */
      bindingSource?: BindingSource;
    });

/**
 * A ready step's inputs, with their bindings resolved from the plan as it is
 * now: only the results of the steps they bind are read, not every step's.
 */
export async function withInputs(
  ctx: ServiceContext,
  ready: ReadyStep,
  inputs: Record<string, unknown> | null,
): Promise<ReadyStep> {
  if (!inputs) return ready;
  const bound = findBindings(inputs).bindings.flatMap((b) =>
    b.kind === "step" ? [String(b.stepOrder)] : [],
  );
  const [plan] = await selectRows(
    ctx.db,
    z.object({ researchQuestion: z.string(), steps: z.array(bindingSourceRow) }),
    sql`select p.research_question as "researchQuestion",
      coalesce((select jsonb_agg(jsonb_build_object('stepId', s.id, 'stepOrder', s.step_order,
        'status', s.status, 'result', s.result, 'tool', s.tool))
        from plan_step s where s.plan_id = p.id
          and s.step_order = any(${arrayParam([...new Set(bound)])}::int[])), '[]'::jsonb) as steps
    from research_plan p where p.id = ${ready.planId}::uuid
      and p.tenant_id is not distinct from ${ctx.tenantId}::uuid`,
  );
  if (!plan) return ready;
  return resolvedFrom(ready, inputs, {
    researchQuestion: plan.researchQuestion,
    steps: new Map(plan.steps.map((s) => [s.stepOrder, s])),
  });
}

function resolvedFrom(
  ready: ReadyStep,
  inputs: Record<string, unknown>,
  source: BindingSource,
): ReadyStep {
  const resolved = resolveBindings(inputs, source);
  // A value is copied as often as it is bound (50 bindings of a 128 KB result
  // were 6.5 MB): past the limit server-run steps hold their arguments to, the
  // inputs go out as written, every binding named, for the agent to read the
  // results it needs (get_step_context).
  if ((jsonBytes(resolved.value) ?? 0) > MAX_RESOLVED_BYTES) {
    const named = findBindings(inputs).bindings.map((b) => b.text);
    return { ...ready, step: { ...ready.step, inputs, unresolvedInputs: named } };
  }
  const step = { ...ready.step, inputs: resolved.value as Record<string, unknown> };
  if (resolved.unresolved.length > 0) {
    step.unresolvedInputs = resolved.unresolved.map((u) => u.binding);
  }
  return { ...ready, step };
}

const bindingSourceRow = z.object({
  stepId: z.string(),
  stepOrder: z.number(),
  status: z.enum(STEP_STATUSES),
  result: z.unknown(),
  tool: z.string().nullable(),
});

export async function resolveInputs(
  ctx: ServiceContext,
  outcome: NextStepWithInputs,
): Promise<NextStep> {
  if (outcome.status !== "ready") return outcome;
  const { inputsToResolve, bindingSource, ...ready } = outcome;
  if (inputsToResolve && bindingSource) return resolvedFrom(ready, inputsToResolve, bindingSource);
  return withInputs(ctx, ready, inputsToResolve ?? null);
}
