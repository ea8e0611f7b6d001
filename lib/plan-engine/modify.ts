/**
 * modify_plan decided in the engine: given the plan and its steps as read, and
 * the change asked for, `decideModify` checks the change, works out the steps
 * as they will be, and returns the writes (as operations for the service to
 * perform), the audit rows, the plan's next status and the bindings that
 * follow moved steps. The reference design's five actions plus `retry_step` (the retry path
 * failed -> pending) and `decline_add_steps` (the answer to a plan waiting on a
 * fired add_steps). `planning`, `executing` and `stalled` plans can be
 * modified: a stalled plan's own agent may still change it (its change resumes
 * the plan).
 */
import { AppError } from "./app-error";
import { type AuditEntry, retryStepEntry } from "./audit-entries";
import { validateBindings } from "./bindings";
import { checkOrderKeepsCheckpoints } from "./checkpoint-guard";
import { bindingsFollow } from "./modify-bindings";
import {
  isNew,
  type ModifyDecision,
  type ModifyEvent,
  type ModifyOp,
  type ModifyStep,
  missingFieldError,
  ordersOf,
} from "./modify-change";
import { decideRevert } from "./modify-revert";
import type { AwaitingSteps } from "./plan-snapshot";
import { decidePlanStatusAfterModify } from "./plan-status";
import type { PlanStatus, StepStatus } from "./states";
import { derivePlanStatus, transitionStep } from "./transitions";

const MODIFIABLE: readonly PlanStatus[] = ["planning", "executing", "stalled"];
/** A plan's most steps (create_research_plan's limit too). */
export const MAX_PLAN_STEPS = 200;

function findStep(steps: readonly ModifyStep[], planId: string, event: ModifyEvent): ModifyStep {
  if (!event.stepId)
    throw missingFieldError(event.action, "stepId", "the id of the step to change");
  const step = steps.find((s) => s.id === event.stepId);
  if (!step) {
    throw new AppError(
      "INVALID_STEP_REFERENCE",
      `Plan ${planId} has no step ${event.stepId}. Call get_research_context for the plan's step ids.`,
      { stepId: event.stepId },
    );
  }
  return step;
}

export function decideModify(
  plan: { id: string; status: PlanStatus; awaitingSteps: AwaitingSteps | null },
  stepsRead: readonly ModifyStep[],
  event: ModifyEvent,
): ModifyDecision {
  // A plan that completed with a failed step is re-opened by retrying that step
  // (completed -> executing), so the work can go on; nothing else changes an ended plan.
  const reopening = event.action === "retry_step" && plan.status === "completed";
  if (!MODIFIABLE.includes(plan.status) && !reopening) {
    throw new AppError(
      "PLAN_NOT_MODIFIABLE",
      `Plan ${plan.id} is ${plan.status}; ${event.action} works only on a plan that is ${MODIFIABLE.join(", ")}.` +
        (plan.status === "awaiting_review" ? " Wait for the person's decision first." : "") +
        (plan.status === "completed"
          ? " A completed plan with a failed step is re-opened with retry_step on that step."
          : ""),
      { planStatus: plan.status },
    );
  }
  const before = [...stepsRead].sort((a, b) => a.stepOrder - b.stepOrder);
  const base = { modificationRationale: event.modificationRationale };
  // The steps as they will be, in their new order.
  let after: ModifyStep[] = before.map((s) => ({ ...s }));
  const ops: ModifyOp[] = [];
  const audit: AuditEntry[] = [];

  switch (event.action) {
    case "add_steps": {
      if (!event.steps) throw missingFieldError("add_steps", "steps", "the steps to add");
      const last = before.length;
      const at = event.insertAfterOrder ?? last;
      if (at > last) {
        throw new AppError(
          "INVALID_STEP_REFERENCE",
          `insertAfterOrder is ${at} but the plan has ${last} step(s); use 0 to ${last}, or omit it to append.`,
          { insertAfterOrder: at },
        );
      }
      if (last + event.steps.length > MAX_PLAN_STEPS) {
        throw new AppError(
          "VALIDATION_ERROR",
          `A plan has at most ${MAX_PLAN_STEPS} steps; it has ${last} and ${event.steps.length} more were asked for.`,
        );
      }
      const added: ModifyStep[] = event.steps.map((step) => ({
        ...step,
        stepOrder: 0,
        status: "pending",
        failureReason: null,
        arguments: null,
        inputs: null,
      }));
      after = [...after.slice(0, at), ...added, ...after.slice(at)];
      after.forEach((s, i) => {
        s.stepOrder = i + 1;
      });
      ops.push({ op: "setOrders", orders: ordersOf(after.filter((s) => !isNew(s, event))) });
      ops.push({ op: "insert", steps: ordersOf(added) });
      audit.push({
        eventType: "plan_modified",
        planId: plan.id,
        payload: {
          action: "add_steps",
          ...base,
          insertAfterOrder: at,
          addedStepIds: added.map((s) => s.id),
        },
      });
      break;
    }
    case "remove_step": {
      const step = findStep(before, plan.id, event);
      if (step.status !== "pending") {
        throw new AppError(
          "INVALID_TRANSITION",
          `Step ${step.stepOrder} is ${step.status}; only a pending step can be removed (a started step can be failed with fail_step).`,
          { stepStatus: step.status },
        );
      }
      after = after.filter((s) => s.id !== step.id);
      after.forEach((s, i) => {
        s.stepOrder = i + 1;
      });
      ops.push({ op: "delete", stepId: step.id }, { op: "setOrders", orders: ordersOf(after) });
      audit.push({
        eventType: "plan_modified",
        planId: plan.id,
        payload: {
          action: "remove_step",
          ...base,
          removedStepId: step.id,
          removedStepOrder: step.stepOrder,
          instructions: step.instructions,
        },
      });
      break;
    }
    case "reorder_steps": {
      const ids = event.stepIds;
      if (!ids) {
        throw missingFieldError(
          "reorder_steps",
          "stepIds",
          "every step id of the plan in the new order",
        );
      }
      const known = new Set(before.map((s) => s.id));
      const unknown = ids.filter((id) => !known.has(id));
      if (unknown.length > 0) {
        throw new AppError(
          "INVALID_STEP_REFERENCE",
          `stepIds names step(s) that are not in plan ${plan.id}: ${unknown.join(", ")}.`,
          { unknown },
        );
      }
      const given = new Set(ids);
      const left = before.filter((s) => !given.has(s.id)).map((s) => s.id);
      if (given.size !== ids.length || left.length > 0) {
        throw new AppError(
          "VALIDATION_ERROR",
          `stepIds must list every step of the plan exactly once (${before.length} ids)` +
            (left.length > 0 ? `; missing: ${left.join(", ")}` : "; some ids are repeated") +
            ".",
        );
      }
      const byId = new Map(after.map((s) => [s.id, s]));
      after = ids.map((id, i) => ({ ...(byId.get(id) as ModifyStep), stepOrder: i + 1 }));
      ops.push({ op: "setOrders", orders: ordersOf(after) });
      audit.push({
        eventType: "plan_modified",
        planId: plan.id,
        payload: {
          action: "reorder_steps",
          ...base,
          previousOrder: before.map((s) => s.id),
          newOrder: [...ids],
        },
      });
      break;
    }
    case "update_step_instructions": {
      const step = findStep(before, plan.id, event);
      if (!event.instructions) {
        throw missingFieldError(
          "update_step_instructions",
          "instructions",
          "the new instruction text",
        );
      }
      ops.push({ op: "setInstructions", stepId: step.id, instructions: event.instructions });
      audit.push({
        eventType: "plan_modified",
        planId: plan.id,
        stepId: step.id,
        payload: {
          action: "update_step_instructions",
          ...base,
          previousInstructions: step.instructions,
          instructions: event.instructions,
        },
      });
      break;
    }
    case "fail_step": {
      const step = findStep(before, plan.id, event);
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
      const failed = transitionStep(started, "failed");
      const reason = event.reason ?? event.modificationRationale;
      setStatus(after, step.id, failed);
      ops.push({ op: "fail", stepId: step.id, reason });
      audit.push(
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
      );
      break;
    }
    case "retry_step": {
      const step = findStep(before, plan.id, event);
      if (step.status !== "failed") {
        throw new AppError(
          "INVALID_TRANSITION",
          `Step ${step.stepOrder} is ${step.status}; only a failed step can be retried.`,
          { entity: "step", from: step.status, to: "pending" },
        );
      }
      setStatus(after, step.id, transitionStep("failed", "pending"));
      ops.push({ op: "retry", stepId: step.id });
      audit.push(
        retryStepEntry(plan.id, step.id, {
          ...base,
          previousFailureReason: step.failureReason,
          ...(reopening ? { reopened: true, previousPlanStatus: plan.status } : {}),
        }),
      );
      break;
    }
    case "decline_add_steps": {
      if (!plan.awaitingSteps) {
        throw new AppError(
          "INVALID_TRANSITION",
          `Plan ${plan.id} is not waiting for steps: decline_add_steps answers a fired add_steps condition that get_next_step reported as awaiting_steps.`,
          { planStatus: plan.status },
        );
      }
      audit.push({
        eventType: "plan_modified",
        planId: plan.id,
        stepId: plan.awaitingSteps.stepId,
        payload: {
          action: "decline_add_steps",
          ...base,
          conditionId: plan.awaitingSteps.conditionId,
        },
      });
      break;
    }
    case "revert_revision": {
      const reverted = decideRevert(plan.id, before, event);
      after = reverted.after;
      ops.push(...reverted.ops);
      audit.push({
        eventType: "plan_modified",
        planId: plan.id,
        payload: {
          action: "revert_revision",
          ...base,
          revision: reverted.revision,
          addedStepIds: reverted.addedStepIds,
          removedStepIds: reverted.removedStepIds,
        },
      });
      break;
    }
  }

  // Every change of order, whatever the action, keeps the checkpoint rule.
  checkOrderKeepsCheckpoints(before, after);
  if (event.action === "revert_revision") {
    // The revision's bindings name its own orders, which the revert restores.
    for (const step of after) {
      if (step.arguments) validateBindings(step.stepOrder, "arguments", step.arguments);
      if (step.inputs) validateBindings(step.stepOrder, "inputs", step.inputs);
    }
  } else {
    ops.push(...bindingsFollow(before, after, event));
  }
  const decided = decidePlanStatusAfterModify(
    plan,
    event.action,
    after.map((s) => s.status),
  );
  return {
    ops,
    audit,
    ...decided,
    ...endedNotice(plan, decided.planStatus, after),
    steps: after.map(({ id, stepOrder, stepType, status }) => ({
      id,
      stepOrder,
      stepType,
      status,
    })),
  };
}

/**
 * Whether failing `stepId` would end the plan: nothing else is left open and
 * no fired add_steps holds it, so it would complete with the step failed. The
 * UI asks before it does so, and modify_plan's answer says it did.
 */
export function failingEndsPlan(
  plan: { awaitingSteps: AwaitingSteps | null },
  steps: readonly { id: string; status: StepStatus }[],
  stepId: string,
): boolean {
  const after = steps.map((s) => (s.id === stepId ? "failed" : s.status));
  return plan.awaitingSteps === null && derivePlanStatus(after) === "completed";
}

/**
 * Nothing ends a plan by surprise: when a change leaves nothing open (failing
 * the last open step, say), the answer says that the plan ended, and how a
 * failed step re-opens it.
 */
function endedNotice(
  plan: { id: string; status: PlanStatus },
  planStatus: PlanStatus,
  after: readonly ModifyStep[],
): { planEnded?: string } {
  if (planStatus !== "completed" || plan.status === "completed") return {};
  const failed = after.filter((s) => s.status === "failed").map((s) => s.stepOrder);
  return {
    planEnded:
      `This change left no step open, so plan ${plan.id} is now completed` +
      (failed.length > 0
        ? ` with step ${failed.join(", ")} failed. To go on with the work, modify_plan retry_step on a failed step re-opens the plan.`
        : "."),
  };
}

function setStatus(steps: ModifyStep[], id: string, status: StepStatus) {
  for (const step of steps) if (step.id === id) step.status = status;
}
