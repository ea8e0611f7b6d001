/**
 * A plan's status as the loop moves it: through valid transitions only,
 * derived from its steps (with Cairn's holds: a fired `add_steps`, a pause),
 * and after modify_plan.
 */
import { AppError } from "./app-error";
import type { AwaitingSteps, LoopStep, PlanSnapshot } from "./plan-snapshot";
import type { PlanStatus, StepStatus } from "./states";
import { derivePlanStatus, isTerminalStepStatus, planTransitionPath } from "./transitions";

/**
 * Whether `stepId` is the plan's last open step: every other step has ended,
 * so a decision that ends it (approve, skip, reject) ends the plan. The review
 * panel warns of that before the person decides.
 */
export function isLastOpenStep(steps: readonly Pick<LoopStep, "id" | "status">[], stepId: string) {
  return steps.every((s) => s.id === stepId || isTerminalStepStatus(s.status));
}

/**
 * The status a plan moves to through valid transitions only (a plan that is
 * `planning`, `stalled` or `awaiting_review` resumes to `executing` first);
 * throws INVALID_TRANSITION when no valid path leads to `to`.
 */
export function planStatusAfter(from: PlanStatus, to: PlanStatus): PlanStatus {
  return planTransitionPath(from, to).at(-1) ?? from;
}

/**
 * The plan's status implied by its steps, with Cairn's one addition to the
 * derivation: a plan waiting for the agent to act on a fired `add_steps` does
 * not complete while it waits.
 */
export function settledPlanStatus(
  from: PlanStatus,
  stepStatuses: readonly StepStatus[],
  awaitingSteps: AwaitingSteps | null,
): PlanStatus {
  const derived = derivePlanStatus(stepStatuses);
  return planStatusAfter(from, derived === "completed" && awaitingSteps ? "executing" : derived);
}

/**
 * The step statuses as the plan's status is derived from them. A pause holds:
 * the server-run step whose tool failed still counts as open while the plan is
 * paused on it, so no other step's result or review completes the plan around
 * it. The pause is answered by its suggested call, a retry, a submit for that
 * step or a cancel (docs/state-machines.md, "A pause holds").
 */
export function statusesWhilePaused(
  plan: Pick<PlanSnapshot, "pausedOnFailedStepId">,
  steps: readonly LoopStep[],
): StepStatus[] {
  return steps.map((s) =>
    s.id === plan.pausedOnFailedStepId && s.status === "failed" ? "pending" : s.status,
  );
}

/**
 * modify_plan's effect on the plan's status, decided from the steps as they
 * are after the change. A `planning` plan stays so until a step starts; a
 * change that leaves the plan with no steps is refused (a plan always keeps at
 * least one step; fail_step ends a step instead); add_steps and
 * decline_add_steps end the wait on a fired `add_steps`.
 */
export function decidePlanStatusAfterModify(
  plan: Pick<PlanSnapshot, "id" | "status" | "awaitingSteps">,
  action: string,
  stepStatusesAfter: readonly StepStatus[],
): { planStatus: PlanStatus; awaitingSteps: AwaitingSteps | null } {
  if (stepStatusesAfter.length === 0) {
    throw new AppError(
      "VALIDATION_ERROR",
      `That would leave plan ${plan.id} with no steps; a plan keeps at least one. Add the replacement step first (add_steps), or end the step with fail_step.`,
      { action },
    );
  }
  const awaitingSteps =
    action === "add_steps" || action === "decline_add_steps" ? null : plan.awaitingSteps;
  if (plan.status === "planning" && stepStatusesAfter.every((status) => status === "pending")) {
    return { planStatus: "planning", awaitingSteps };
  }
  return {
    planStatus: settledPlanStatus(plan.status, stepStatusesAfter, awaitingSteps),
    awaitingSteps,
  };
}
