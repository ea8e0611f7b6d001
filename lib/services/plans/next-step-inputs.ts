/**
 * A ready step's inputs (docs/protocol.md, "Bindings"), resolved after the
 * claim's transaction: from the steps a run of server steps left in that
 * transaction when one ran, else from the plan as it is when the answer leaves.
 */
import "server-only";
import { z } from "zod";
import { arrayParam, run, statement } from "../../db/statement";
import {
  type BindingSource,
  findBindings,
  MAX_RESOLVED_BYTES,
  resolveBindings,
} from "../../plan-engine/bindings";
import { boundStepOrders, boundStepRow, boundStepsColumn } from "../loop/bound-steps";
import { planOfTenant } from "../loop/plan-lock";
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

const readBindingSource = statement(
  "read what a handed-out step's inputs bind",
  `select p.research_question as "researchQuestion",
      ${boundStepsColumn("p.id", "p.tenant_id", "$3::int[]")} as steps
    from research_plan p where ${planOfTenant("p")}`,
  z.object({ researchQuestion: z.string(), steps: z.array(boundStepRow) }),
);

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
  const bound = [...boundStepOrders([inputs])].map(String);
  const [plan] = await run(ctx.db, readBindingSource, [
    ready.planId,
    ctx.tenantId,
    arrayParam(bound),
  ]);
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

export async function resolveInputs(
  ctx: ServiceContext,
  outcome: NextStepWithInputs,
): Promise<NextStep> {
  if (outcome.status !== "ready") return outcome;
  const { inputsToResolve, bindingSource, ...ready } = outcome;
  if (inputsToResolve && bindingSource) return resolvedFrom(ready, inputsToResolve, bindingSource);
  return withInputs(ctx, ready, inputsToResolve ?? null);
}
