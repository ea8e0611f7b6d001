/**
 * Bindings name steps by order, so a modify_plan change that moves steps
 * moves the bindings of the steps that were there with them.
 */
import { AppError } from "./app-error";
import { renumberBindings, validateBindings } from "./bindings";
import { isNew, type ModifyEvent, type ModifyOp, type ModifyStep } from "./modify-change";

/**
 * Bindings name steps by order, so the bindings of the steps that were there
 * before follow their steps. A binding to a removed step, or one that would
 * now read a step that is not earlier, refuses the change.
 */
export function bindingsFollow(
  before: readonly ModifyStep[],
  after: readonly ModifyStep[],
  event: ModifyEvent,
): ModifyOp[] {
  const newOrderById = new Map(after.map((s) => [s.id, s.stepOrder]));
  const idByOldOrder = new Map(before.map((s) => [s.stepOrder, s.id]));
  const orderOf = (old: number) => {
    const id = idByOldOrder.get(old);
    return id === undefined ? undefined : newOrderById.get(id);
  };
  const ops: ModifyOp[] = [];
  for (const step of after) {
    if (isNew(step, event) || (step.arguments === null && step.inputs === null)) continue;
    const change: Extract<ModifyOp, { op: "setBindings" }> = { op: "setBindings", stepId: step.id };
    for (const field of ["arguments", "inputs"] as const) {
      const value = step[field];
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
      if (renumbered.changed) change[field] = renumbered.value;
    }
    if (change.arguments !== undefined || change.inputs !== undefined) ops.push(change);
  }
  return ops;
}
