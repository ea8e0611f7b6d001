/**
 * modify_plan: locks the plan, reads its steps, and asks the engine
 * (`decideModify`, lib/plan-engine/modify.ts) what the change does: which
 * checks refuse it, which writes and audit rows it makes, what the plan's
 * status becomes and how bindings follow moved steps. This file only reads and
 * performs the engine's operations, in one transaction.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { and, asc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { planSteps, researchPlans } from "../../db/schema";
import { jsonParam } from "../../db/statement";
import { checkCheckpointPass } from "../../plan-engine/checkpoint-guard";
import { decideModify } from "../../plan-engine/modify";
import {
  MODIFY_ACTIONS,
  type ModifyAction,
  type ModifyOp,
  type ModifyStep,
} from "../../plan-engine/modify-change";
import { readDecisionPolicy } from "../reviews/decision-rules";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import {
  instructionsField,
  MAX_STEPS,
  newStepField,
  planIdField,
  stepIdField,
} from "../shared/fields";
import { planStatus, stepStatus, stepType } from "../shared/output-fields";
import { lockPlan, setPlanStatusAndQueueEvent } from "../shared/plan-access";
import { checkDefinitionTotal, planDefinitionBytes } from "../shared/plan-definitions";
import { readRevision } from "../shared/revisions";
import { stepDefinitionColumns, validateStepDefinition } from "../shared/server-step-tools";
import { parseInput } from "../shared/validation";

export { MODIFY_ACTIONS, type ModifyAction };

// One flat object rather than a union per action: MCP clients expect a tool's
// input schema to be a plain JSON object, and the engine's per-action checks give
// clearer messages than a union's "no variant matched".
export const modifyPlanInput = z.object({
  planId: planIdField,
  action: z
    .enum(MODIFY_ACTIONS)
    .describe(
      "add_steps (steps, insertAfterOrder); remove_step, retry_step (stepId); fail_step (stepId, reason; on the last open step it ends the plan); reorder_steps (stepIds, all); update_step_instructions (stepId, instructions); decline_add_steps (a fired add_steps you will not follow); revert_revision (revision: unstarted steps as then).",
    ),
  modificationRationale: z
    .string()
    .trim()
    .min(1, "say why the plan changes")
    .max(10_000)
    .describe("Why; recorded in the audit trail."),
  steps: z.array(newStepField).min(1).max(MAX_STEPS).optional(),
  insertAfterOrder: z
    .int()
    .min(0)
    .optional()
    .describe("add_steps: after this stepOrder (0: first); left out, at the end."),
  stepId: stepIdField.optional(),
  stepIds: z
    .array(z.uuid())
    .max(MAX_STEPS * 2)
    .optional()
    .describe("reorder_steps: every step id, in the new order."),
  instructions: instructionsField.optional(),
  reason: z.string().trim().min(1).max(10_000).optional(),
  revision: z.int().min(1).max(1_000_000_000).optional(),
});

export type ModifyPlanInput = z.input<typeof modifyPlanInput>;
type Input = z.output<typeof modifyPlanInput>;

/** The answer: the plan's status and its steps in their new order (the MCP tool's output schema). */
export const planModifiedOutput = z.object({
  planId: z.string(),
  action: z.enum(MODIFY_ACTIONS),
  planStatus,
  steps: z.array(
    z.object({ stepId: z.string(), stepOrder: z.number(), stepType, status: stepStatus }),
  ),
  /** Set when this change ended the plan (it left no step open): what happened and how to go on. */
  planEnded: z.string().optional(),
});

export type PlanModified = z.infer<typeof planModifiedOutput>;

export async function modifyPlan(ctx: ServiceContext, raw: ModifyPlanInput): Promise<PlanModified> {
  const input = parseInput(modifyPlanInput, raw);
  // Ids for new steps are made here, so the engine can name them in its
  // decision (and the audit row) before they are stored.
  const newSteps = input.steps?.map((step) => ({ ...step, id: randomUUID() }));
  return ctx.db.transaction(async (tx) => {
    const plan = await lockPlan(tx, ctx, input.planId);
    const held = ADDS_DEFINITIONS.has(input.action)
      ? await planDefinitionBytes(tx, ctx, plan.id)
      : null;
    const before = await loadModifySteps(tx, ctx, plan.id, input);
    const revert =
      input.action === "revert_revision" && input.revision !== undefined
        ? { revision: input.revision, steps: await readRevision(tx, ctx, plan.id, input.revision) }
        : undefined;
    // The engine's refusals first (a review waits, the step has ended): they
    // say where the plan stands.
    const decided = decideModify(plan, before, { ...input, steps: newSteps, revert });
    await checkCheckpointsPassed(tx, ctx, before, decided.ops);
    const now = new Date();
    // A revert's steps that come back are the revision's own, with their ids.
    const inserted = revert
      ? (revert.steps ?? [])
          .filter((step) => !before.some((s) => s.id === step.id))
          .map((step) => ({
            id: step.id,
            stepType: step.stepType,
            instructions: step.instructions,
            tool: step.tool ?? undefined,
            arguments: step.arguments ?? undefined,
            inputs: step.inputs ?? undefined,
            outputSchema: step.outputSchema ?? undefined,
          }))
      : (newSteps ?? []);
    await applyOps(tx, ctx, plan.id, decided.ops, inserted, now);
    if (held !== null) await checkDefinitionTotal(tx, ctx, plan.id, held);
    const planStatus = await setPlanStatusAndQueueEvent(tx, plan, decided.planStatus, now);
    // Any change ends a pause of the server-run steps: get_next_step decides
    // again whether they can run now.
    if (decided.awaitingSteps !== plan.awaitingSteps || plan.pauseReason) {
      await tx
        .update(researchPlans)
        .set({ awaitingSteps: decided.awaitingSteps, pauseReason: null })
        .where(eq(researchPlans.id, plan.id));
    }
    await writeAuditLog(tx, ctx, decided.audit);
    return {
      planId: plan.id,
      action: input.action,
      planStatus,
      steps: decided.steps.map((s) => ({
        stepId: s.id,
        stepOrder: s.stepOrder,
        stepType: s.stepType,
        status: s.status,
      })),
      ...(decided.planEnded ? { planEnded: decided.planEnded } : {}),
    };
  });
}

type NewStepInput = NonNullable<Input["steps"]>[number] & { id: string };

/**
 * The checkpoint rule for every step a change removes or fails, whichever
 * action does it: remove_step and fail_step name their step, and a
 * revert_revision removes each pending step added since the revision (a
 * checkpoint among them would otherwise be gone without a person's decision).
 */
async function checkCheckpointsPassed(
  tx: Transaction,
  ctx: ServiceContext,
  before: readonly { id: string; stepOrder: number; stepType: string }[],
  ops: readonly ModifyOp[],
): Promise<void> {
  const byId = new Map(before.map((step) => [step.id, step]));
  const passed: {
    step: { stepOrder: number; stepType: string };
    how: "remove_step" | "fail_step";
  }[] = [];
  for (const op of ops) {
    const step = op.op === "delete" || op.op === "fail" ? byId.get(op.stepId) : undefined;
    if (step?.stepType === "checkpoint") {
      passed.push({ step, how: op.op === "delete" ? "remove_step" : "fail_step" });
    }
  }
  if (passed.length === 0) return;
  const policy = await readDecisionPolicy(tx, ctx.tenantId);
  for (const { step, how } of passed) checkCheckpointPass(policy, ctx.actor.type, step, how);
}

/**
 * The actions that add to the plan's definitions (new steps, longer
 * instructions, a revision's steps back): the others only move, shorten or
 * drop them, which never takes a plan over its total.
 */
const ADDS_DEFINITIONS = new Set<ModifyAction>([
  "add_steps",
  "update_step_instructions",
  "revert_revision",
]);

/**
 * The actions that move no step: bindings name steps by order, so these
 * renumber none and read no step's arguments or inputs.
 */
const MOVES_NO_STEP = new Set<ModifyAction>([
  "update_step_instructions",
  "fail_step",
  "retry_step",
  "decline_add_steps",
]);

/**
 * The plan's steps as the engine decides a change on them: not their results,
 * reports or output schemas, which no change reads. Instructions are read
 * whole only by a revert (it compares and restores them); any other action
 * reads those of the step it names (its audit keeps them) and the others'
 * are null. Arguments and inputs only when steps move, for their bindings. A
 * plan's definitions reach 16 MB, which took another team's ping up to 1.1 s
 * to read on every change (docs/security.md).
 */
function loadModifySteps(
  tx: Transaction,
  ctx: ServiceContext,
  planId: string,
  input: Pick<Input, "action" | "stepId">,
): Promise<ModifyStep[]> {
  const bindings = !MOVES_NO_STEP.has(input.action);
  const named = input.stepId ?? null;
  return tx
    .select({
      id: planSteps.id,
      stepOrder: planSteps.stepOrder,
      stepType: planSteps.stepType,
      status: planSteps.status,
      instructions:
        input.action === "revert_revision"
          ? planSteps.instructions
          : sql<
              string | null
            >`case when ${planSteps.id} = ${named}::uuid then ${planSteps.instructions} end`,
      failureReason: planSteps.failureReason,
      arguments: bindings ? planSteps.arguments : sql<null>`null`,
      inputs: bindings ? planSteps.inputs : sql<null>`null`,
    })
    .from(planSteps)
    .where(and(eq(planSteps.planId, planId), eq(planSteps.tenantId, ctx.tenantId)))
    .orderBy(asc(planSteps.stepOrder));
}

/** Performs the engine's operations, in order. */
async function applyOps(
  tx: Transaction,
  ctx: ServiceContext,
  planId: string,
  ops: ModifyOp[],
  newSteps: NewStepInput[],
  now: Date,
) {
  // Renumbered bindings are written with the new orders, each row once.
  const bindings = ops.filter((op) => op.op === "setBindings");
  for (const op of ops) {
    switch (op.op) {
      case "setOrders":
        await setOrdersAndBindings(tx, planId, op.orders, bindings.splice(0), now);
        break;
      case "insert": {
        const orderOf = new Map(op.steps.map((s) => [s.id, s.stepOrder]));
        for (const step of newSteps) validateStepDefinition(orderOf.get(step.id) ?? 0, step);
        await tx.insert(planSteps).values(
          newSteps.map((step) => ({
            id: step.id,
            tenantId: ctx.tenantId,
            planId,
            stepOrder: orderOf.get(step.id) ?? 0,
            stepType: step.stepType,
            instructions: step.instructions,
            ...stepDefinitionColumns(step),
            createdAt: now,
            updatedAt: now,
          })),
        );
        break;
      }
      case "delete":
        await tx.delete(planSteps).where(eq(planSteps.id, op.stepId));
        break;
      case "setInstructions":
        await tx
          .update(planSteps)
          .set({ instructions: op.instructions, updatedAt: now })
          .where(eq(planSteps.id, op.stepId));
        break;
      case "fail":
        await tx
          .update(planSteps)
          .set({
            status: "failed",
            failureReason: op.reason,
            startedAt: sql`coalesce(${planSteps.startedAt}, ${now.toISOString()}::timestamptz)`,
            completedAt: now,
            leaseExpiresAt: null,
            updatedAt: now,
          })
          .where(eq(planSteps.id, op.stepId));
        break;
      case "retry":
        await tx
          .update(planSteps)
          .set({
            status: "pending",
            failureReason: null,
            startedAt: null,
            completedAt: null,
            updatedAt: now,
          })
          .where(eq(planSteps.id, op.stepId));
        break;
    }
  }
  await setOrdersAndBindings(tx, planId, [], bindings, now);
}

/**
 * Steps' new orders and renumbered bindings in one statement, each row
 * written once: a change in front of a plan moves and renumbers up to 199
 * steps, and on PGlite, where the database shares the event loop, a statement
 * a step (or each row written twice) was every other team's wait too.
 */
async function setOrdersAndBindings(
  tx: Transaction,
  planId: string,
  orders: readonly { id: string; stepOrder: number }[],
  bindings: readonly Extract<ModifyOp, { op: "setBindings" }>[],
  now: Date,
) {
  const rows = new Map<string, Record<string, unknown>>();
  for (const { id, stepOrder } of orders) rows.set(id, { id, stepOrder });
  for (const op of bindings) {
    rows.set(op.stepId, {
      ...rows.get(op.stepId),
      id: op.stepId,
      arguments: op.arguments ?? null,
      inputs: op.inputs ?? null,
      setArguments: op.arguments !== undefined,
      setInputs: op.inputs !== undefined,
    });
  }
  if (rows.size === 0) return;
  await tx.execute(sql`
    update plan_step set
      step_order = coalesce(b."stepOrder", plan_step.step_order),
      arguments = case when b."setArguments" then b.arguments else plan_step.arguments end,
      inputs = case when b."setInputs" then b.inputs else plan_step.inputs end,
      updated_at = ${now.toISOString()}
    from jsonb_to_recordset(${jsonParam([...rows.values()])}::jsonb) as b(id uuid,
      "stepOrder" int, arguments jsonb, inputs jsonb, "setArguments" boolean, "setInputs" boolean)
    where plan_step.id = b.id and plan_step.plan_id = ${planId}::uuid and (plan_step.step_order <> coalesce(b."stepOrder", plan_step.step_order)
      or b."setArguments" is true or b."setInputs" is true)`);
}
