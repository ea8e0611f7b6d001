/**
 * modify_plan (execution-loop.md, "Plan Modification During Execution"): the
 * spec's five actions plus `retry_step`, the retry path of state-machines.md
 * (`failed -> pending`). Only `planning` and `executing` plans can be modified;
 * the two recovery actions, fail_step and retry_step, also work on a `stalled`
 * plan, because failing or retrying the stuck step is how a stall is resolved.
 */
import { and, eq, gt, sql } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../db/client";
import { planSteps, researchPlans } from "../db/schema";
import { AppError } from "../plan-engine/app-error";
import { renumberBindings, validateBindings } from "../plan-engine/bindings";
import { decidePlanStatusAfterModify } from "../plan-engine/loop";
import type { PlanStatus, StepStatus, StepType } from "../plan-engine/states";
import { transitionStep } from "../plan-engine/transitions";
import { type AuditEntry, writeAuditLog } from "./audit";
import type { ServiceContext } from "./context";
import { instructionsField, MAX_STEPS, newStepField, planIdField, stepIdField } from "./fields";
import { loadSteps, lockPlan, type PlanRow, type StepRow, setPlanStatus } from "./plan-access";
import { stepDefinitionColumns, validateStepDefinition } from "./server-step-tools";
import { parseInput } from "./validation";

export const MODIFY_ACTIONS = [
  "add_steps",
  "remove_step",
  "reorder_steps",
  "update_step_instructions",
  "fail_step",
  "retry_step",
  "decline_add_steps",
] as const;
export type ModifyAction = (typeof MODIFY_ACTIONS)[number];

// One flat object rather than a union per action: MCP clients expect a tool's
// input schema to be a plain JSON object, and the per-action checks below give
// clearer messages than a union's "no variant matched".
export const modifyPlanInput = z.object({
  planId: planIdField,
  action: z
    .enum(MODIFY_ACTIONS)
    .describe(
      "add_steps (steps, optional insertAfterOrder); remove_step (stepId of a pending step); reorder_steps (stepIds: every step id in the new order); update_step_instructions (stepId, instructions); fail_step (stepId of a pending or in-progress step, reason); retry_step (stepId of a failed step, back to pending); decline_add_steps (the plan waits on a fired add_steps condition and you will not add steps: it completes).",
    ),
  modificationRationale: z
    .string()
    .trim()
    .min(1, "say why the plan changes")
    .max(10_000)
    .describe("Why the change is needed; recorded in the audit trail."),
  steps: z
    .array(newStepField)
    .min(1)
    .max(MAX_STEPS)
    .optional()
    .describe("add_steps: the new steps, in order."),
  insertAfterOrder: z
    .int()
    .min(0)
    .optional()
    .describe(
      "add_steps: insert after this stepOrder (0 = at the start); omitted = append at the end.",
    ),
  stepId: stepIdField.optional().describe("The step that remove/update/fail/retry act on."),
  stepIds: z
    .array(z.uuid())
    .max(MAX_STEPS * 2)
    .optional()
    .describe("reorder_steps: every step id of the plan, in the new order."),
  instructions: instructionsField.optional().describe("update_step_instructions: the new text."),
  reason: z
    .string()
    .trim()
    .min(1)
    .max(10_000)
    .optional()
    .describe("fail_step: why the step failed."),
});

export type ModifyPlanInput = z.input<typeof modifyPlanInput>;
type Input = z.output<typeof modifyPlanInput>;

export type PlanModified = {
  planId: string;
  action: ModifyAction;
  planStatus: PlanStatus;
  steps: { stepId: string; stepOrder: number; stepType: StepType; status: StepStatus }[];
};

function missing(action: string, field: string, what: string): AppError {
  return new AppError("VALIDATION_ERROR", `${action} needs ${field}: ${what}.`, { field });
}

function findStep(steps: StepRow[], planId: string, stepId: string | undefined, action: string) {
  if (!stepId) throw missing(action, "stepId", "the id of the step to change");
  const step = steps.find((s) => s.id === stepId);
  if (!step) {
    throw new AppError(
      "INVALID_STEP_REFERENCE",
      `Plan ${planId} has no step ${stepId}. Call get_research_context for the plan's step ids.`,
      { stepId },
    );
  }
  return step;
}

async function renumber(tx: Transaction, orderedIds: string[], now: Date) {
  if (orderedIds.length === 0) return;
  // One statement: each id gets its 1-based position in the list. The ids travel
  // as one bound JSON parameter, never spliced into the SQL text.
  await tx.execute(sql`
    update plan_step set step_order = ordered.position, updated_at = ${now.toISOString()}
    from jsonb_array_elements_text(${JSON.stringify(orderedIds)}::jsonb)
      with ordinality as ordered(id, position)
    where plan_step.id = ordered.id::uuid`);
}

async function apply(
  tx: Transaction,
  ctx: ServiceContext,
  plan: PlanRow,
  steps: StepRow[],
  input: Input,
  now: Date,
): Promise<AuditEntry[]> {
  const base = { modificationRationale: input.modificationRationale };
  switch (input.action) {
    case "add_steps": {
      if (!input.steps) throw missing("add_steps", "steps", "the steps to add");
      const last = steps.length;
      const after = input.insertAfterOrder ?? last;
      if (after > last) {
        throw new AppError(
          "INVALID_STEP_REFERENCE",
          `insertAfterOrder is ${after} but the plan has ${last} step(s); use 0 to ${last}, or omit it to append.`,
          { insertAfterOrder: after },
        );
      }
      if (last + input.steps.length > MAX_STEPS) {
        throw new AppError(
          "VALIDATION_ERROR",
          `A plan has at most ${MAX_STEPS} steps; it has ${last} and ${input.steps.length} more were asked for.`,
        );
      }
      input.steps.forEach((step, index) => {
        validateStepDefinition(after + index + 1, step);
      });
      await tx
        .update(planSteps)
        .set({ stepOrder: sql`${planSteps.stepOrder} + ${input.steps.length}`, updatedAt: now })
        .where(and(eq(planSteps.planId, plan.id), gt(planSteps.stepOrder, after)));
      const added = await tx
        .insert(planSteps)
        .values(
          input.steps.map((step, index) => ({
            tenantId: ctx.tenantId,
            planId: plan.id,
            stepOrder: after + index + 1,
            stepType: step.stepType,
            instructions: step.instructions,
            ...stepDefinitionColumns(step),
            createdAt: now,
            updatedAt: now,
          })),
        )
        .returning({ id: planSteps.id, stepOrder: planSteps.stepOrder });
      return [
        {
          eventType: "plan_modified",
          planId: plan.id,
          payload: {
            action: "add_steps",
            ...base,
            insertAfterOrder: after,
            addedStepIds: added.sort((a, b) => a.stepOrder - b.stepOrder).map((s) => s.id),
          },
        },
      ];
    }
    case "remove_step": {
      const step = findStep(steps, plan.id, input.stepId, "remove_step");
      if (step.status !== "pending") {
        throw new AppError(
          "INVALID_TRANSITION",
          `Step ${step.stepOrder} is ${step.status}; only a pending step can be removed (a started step can be failed with fail_step).`,
          { stepStatus: step.status },
        );
      }
      await tx.delete(planSteps).where(eq(planSteps.id, step.id));
      await renumber(
        tx,
        steps.filter((s) => s.id !== step.id).map((s) => s.id),
        now,
      );
      return [
        {
          eventType: "plan_modified",
          planId: plan.id,
          payload: {
            action: "remove_step",
            ...base,
            removedStepId: step.id,
            removedStepOrder: step.stepOrder,
            instructions: step.instructions,
          },
        },
      ];
    }
    case "reorder_steps": {
      const ids = input.stepIds;
      if (!ids)
        throw missing("reorder_steps", "stepIds", "every step id of the plan in the new order");
      const known = new Set(steps.map((s) => s.id));
      const unknown = ids.filter((id) => !known.has(id));
      if (unknown.length > 0) {
        throw new AppError(
          "INVALID_STEP_REFERENCE",
          `stepIds names step(s) that are not in plan ${plan.id}: ${unknown.join(", ")}.`,
          { unknown },
        );
      }
      const given = new Set(ids);
      const left = steps.filter((s) => !given.has(s.id)).map((s) => s.id);
      if (given.size !== ids.length || left.length > 0) {
        throw new AppError(
          "VALIDATION_ERROR",
          `stepIds must list every step of the plan exactly once (${steps.length} ids)` +
            (left.length > 0 ? `; missing: ${left.join(", ")}` : "; some ids are repeated") +
            ".",
        );
      }
      await renumber(tx, ids, now);
      return [
        {
          eventType: "plan_modified",
          planId: plan.id,
          payload: {
            action: "reorder_steps",
            ...base,
            previousOrder: steps.map((s) => s.id),
            newOrder: ids,
          },
        },
      ];
    }
    case "update_step_instructions": {
      const step = findStep(steps, plan.id, input.stepId, "update_step_instructions");
      if (!input.instructions) {
        throw missing("update_step_instructions", "instructions", "the new instruction text");
      }
      await tx
        .update(planSteps)
        .set({ instructions: input.instructions, updatedAt: now })
        .where(eq(planSteps.id, step.id));
      return [
        {
          eventType: "plan_modified",
          planId: plan.id,
          stepId: step.id,
          payload: {
            action: "update_step_instructions",
            ...base,
            previousInstructions: step.instructions,
            instructions: input.instructions,
          },
        },
      ];
    }
    case "fail_step": {
      const step = findStep(steps, plan.id, input.stepId, "fail_step");
      if (step.status !== "pending" && step.status !== "in_progress") {
        throw new AppError(
          "INVALID_TRANSITION",
          `Step ${step.stepOrder} is ${step.status}; only a pending or in-progress step can be failed.`,
          { entity: "step", from: step.status, to: "failed" },
        );
      }
      // A pending step is started and failed in one go: the machine has no direct pending -> failed.
      const started =
        step.status === "pending" ? transitionStep("pending", "in_progress") : step.status;
      const reason = input.reason ?? input.modificationRationale;
      await tx
        .update(planSteps)
        .set({
          status: transitionStep(started, "failed"),
          failureReason: reason,
          startedAt: step.startedAt ?? now,
          completedAt: now,
          leaseExpiresAt: null,
          updatedAt: now,
        })
        .where(eq(planSteps.id, step.id));
      return [
        {
          eventType: "step_failed",
          planId: plan.id,
          stepId: step.id,
          payload: { stepOrder: step.stepOrder, reason, source: "fail_step" },
        },
        {
          eventType: "plan_modified",
          planId: plan.id,
          stepId: step.id,
          payload: { action: "fail_step", ...base, reason },
        },
      ];
    }
    case "decline_add_steps": {
      if (!plan.awaitingSteps) {
        throw new AppError(
          "INVALID_TRANSITION",
          `Plan ${plan.id} is not waiting for steps: decline_add_steps answers a fired add_steps condition that get_next_step reported as awaiting_steps.`,
          { planStatus: plan.status },
        );
      }
      return [
        {
          eventType: "plan_modified",
          planId: plan.id,
          stepId: plan.awaitingSteps.stepId,
          payload: {
            action: "decline_add_steps",
            ...base,
            conditionId: plan.awaitingSteps.conditionId,
          },
        },
      ];
    }
    case "retry_step": {
      const step = findStep(steps, plan.id, input.stepId, "retry_step");
      if (step.status !== "failed") {
        throw new AppError(
          "INVALID_TRANSITION",
          `Step ${step.stepOrder} is ${step.status}; only a failed step can be retried.`,
          { entity: "step", from: step.status, to: "pending" },
        );
      }
      await tx
        .update(planSteps)
        .set({
          status: transitionStep("failed", "pending"),
          failureReason: null,
          startedAt: null,
          completedAt: null,
          updatedAt: now,
        })
        .where(eq(planSteps.id, step.id));
      return [
        {
          eventType: "plan_modified",
          planId: plan.id,
          stepId: step.id,
          payload: { action: "retry_step", ...base, previousFailureReason: step.failureReason },
        },
      ];
    }
  }
}

/**
 * Bindings name steps by order, so when steps were added, removed or reordered
 * the bindings of the steps that were there before follow them. A binding to a
 * removed step, or one that would now read a step that is not earlier, refuses
 * the change (the transaction rolls back).
 */
async function renumberStepBindings(
  tx: Transaction,
  before: StepRow[],
  after: StepRow[],
  now: Date,
) {
  const newOrderById = new Map(after.map((s) => [s.id, s.stepOrder]));
  const idByOldOrder = new Map(before.map((s) => [s.stepOrder, s.id]));
  const orderOf = (old: number) => {
    const id = idByOldOrder.get(old);
    return id === undefined ? undefined : newOrderById.get(id);
  };
  for (const step of after) {
    const old = before.find((s) => s.id === step.id);
    if (!old || (old.arguments === null && old.inputs === null)) continue;
    const changes: { arguments?: Record<string, unknown>; inputs?: Record<string, unknown> } = {};
    for (const field of ["arguments", "inputs"] as const) {
      const value = old[field];
      if (value === null) continue;
      const renumbered = renumberBindings(value, orderOf);
      if (renumbered.lost) {
        throw new AppError(
          "INVALID_STEP_REFERENCE",
          `Step ${step.stepOrder}'s ${field} bind ${renumbered.lost}, whose step this change removes; change or remove step ${step.stepOrder} first.`,
          { stepId: step.id, field },
        );
      }
      validateBindings(step.stepOrder, field, renumbered.value);
      if (JSON.stringify(renumbered.value) !== JSON.stringify(value)) {
        changes[field] = renumbered.value as Record<string, unknown>;
      }
    }
    if (Object.keys(changes).length > 0) {
      await tx
        .update(planSteps)
        .set({ ...changes, updatedAt: now })
        .where(eq(planSteps.id, step.id));
    }
  }
}

const MODIFIABLE: readonly PlanStatus[] = ["planning", "executing"];
const RECOVERABLE: readonly PlanStatus[] = ["planning", "executing", "stalled"];

export async function modifyPlan(ctx: ServiceContext, raw: ModifyPlanInput): Promise<PlanModified> {
  const input = parseInput(modifyPlanInput, raw);
  return ctx.db.transaction(async (tx) => {
    const plan = await lockPlan(tx, ctx, input.planId);
    const allowed =
      input.action === "fail_step" || input.action === "retry_step" ? RECOVERABLE : MODIFIABLE;
    if (!allowed.includes(plan.status)) {
      throw new AppError(
        "PLAN_NOT_MODIFIABLE",
        `Plan ${plan.id} is ${plan.status}; ${input.action} works only on a plan that is ${allowed.join(" or ")}.` +
          (plan.status === "awaiting_review"
            ? " Wait for the person's decision first."
            : plan.status === "stalled"
              ? " Resolve the stall first: fail_step or retry_step, or resume with get_next_step."
              : ""),
        { planStatus: plan.status },
      );
    }
    const now = new Date();
    const before = await loadSteps(tx, ctx, plan.id);
    const audit = await apply(tx, ctx, plan, before, input, now);
    const after = await loadSteps(tx, ctx, plan.id);
    await renumberStepBindings(tx, before, after, now);
    const decided = decidePlanStatusAfterModify(
      plan,
      input.action,
      after.map((s) => s.status),
    );
    const planStatus = await setPlanStatus(tx, plan, decided.planStatus, now);
    // Any change ends a pause of the server-run steps: get_next_step decides
    // again whether they can run now.
    if (decided.awaitingSteps !== plan.awaitingSteps || plan.pauseReason) {
      await tx
        .update(researchPlans)
        .set({ awaitingSteps: decided.awaitingSteps, pauseReason: null })
        .where(eq(researchPlans.id, plan.id));
    }
    await writeAuditLog(tx, ctx, audit);
    return {
      planId: plan.id,
      action: input.action,
      planStatus,
      steps: after.map((s) => ({
        stepId: s.id,
        stepOrder: s.stepOrder,
        stepType: s.stepType,
        status: s.status,
      })),
    };
  });
}
