/**
 * modify_plan's revert_revision (docs/history-and-forks.md): the plan's steps
 * as they were at a revision, as far as the steps already started allow.
 */
import { AppError } from "./app-error";
import type { ModifyEvent, ModifyOp, ModifyStep } from "./modify-change";
import { missingFieldError, ordersOf } from "./modify-change";

const sameJson = (a: unknown, b: unknown) =>
  JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * revert_revision: the plan's steps as they were at `event.revert.revision`.
 * Steps not yet started take that revision's definitions, place and presence
 * (a step added since is removed, one removed since comes back pending); a
 * started step keeps its status and result, and must stand as it did then,
 * in the same order among the started ones: else the revert is refused, with
 * the step and why.
 */
export function decideRevert(planId: string, before: readonly ModifyStep[], event: ModifyEvent) {
  const revert = event.revert;
  if (!revert) {
    throw missingFieldError(
      "revert_revision",
      "revision",
      "the revision to restore (get_plan_history)",
    );
  }
  const { revision } = revert;
  if (!revert.steps) {
    throw new AppError(
      "NOT_FOUND",
      `Plan ${planId} has no revision ${revision}. Call get_plan_history for its revisions.`,
      { revision },
    );
  }
  const target = [...revert.steps].sort((a, b) => a.stepOrder - b.stepOrder);
  const then = new Map(target.map((step) => [step.id, step]));
  const now = new Map(before.map((step) => [step.id, step]));
  const refuse = (step: ModifyStep, why: string) =>
    new AppError(
      "INVALID_TRANSITION",
      `Step ${step.stepOrder} is ${step.status}, and reverting plan ${planId} to revision ${revision} would ${why}; a revert changes only steps not yet started. Nothing was changed.`,
      { stepId: step.id, stepStatus: step.status, revision },
    );
  const started = before.filter((step) => step.status !== "pending");
  for (const step of started) {
    const was = then.get(step.id);
    if (!was) throw refuse(step, "remove it (it was added after that revision)");
    if (was.instructions !== step.instructions) throw refuse(step, "change its instructions");
    if (!sameJson(was.arguments, step.arguments) || !sameJson(was.inputs, step.inputs)) {
      throw refuse(step, "change its arguments or inputs");
    }
  }
  const startedIds = new Set(started.map((step) => step.id));
  const startedThen = target.filter((step) => startedIds.has(step.id)).map((step) => step.id);
  started.forEach((step, index) => {
    if (startedThen[index] !== step.id) throw refuse(step, "move it among the started steps");
  });
  const after: (ModifyStep & { instructions: string })[] = target.map((was, index) => {
    const current = now.get(was.id);
    return {
      id: was.id,
      stepOrder: index + 1,
      stepType: was.stepType,
      status: current?.status ?? "pending",
      failureReason: current?.failureReason ?? null,
      instructions: was.instructions,
      arguments: was.arguments,
      inputs: was.inputs,
    };
  });
  const removed = before.filter((step) => !then.has(step.id));
  const added = after.filter((step) => !now.has(step.id));
  const ops: ModifyOp[] = removed.map((step) => ({ op: "delete" as const, stepId: step.id }));
  ops.push({ op: "setOrders", orders: ordersOf(after.filter((step) => now.has(step.id))) });
  if (added.length > 0) ops.push({ op: "insert", steps: ordersOf(added) });
  for (const step of after) {
    const current = now.get(step.id);
    if (current?.status !== "pending") continue;
    if (current.instructions !== step.instructions) {
      ops.push({ op: "setInstructions", stepId: step.id, instructions: step.instructions });
    }
    const args = !sameJson(current.arguments, step.arguments);
    const inputs = !sameJson(current.inputs, step.inputs);
    if (args || inputs) {
      ops.push({
        op: "setBindings",
        stepId: step.id,
        ...(args ? { arguments: step.arguments } : {}),
        ...(inputs ? { inputs: step.inputs } : {}),
      });
    }
  }
  return {
    revision,
    after,
    ops,
    addedStepIds: added.map((step) => step.id),
    removedStepIds: removed.map((step) => step.id),
  };
}
