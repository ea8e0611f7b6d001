/**
 * The plan and step state machines of docs/state-machines.md, kept as
 * data (the two tables) plus pure functions that read them. The services perform
 * what these functions decide; nothing here touches storage.
 */
import { AppError } from "./app-error";
import {
  type PlanStatus,
  type StepStatus,
  TERMINAL_PLAN_STATUSES,
  TERMINAL_STEP_STATUSES,
} from "./states";

/**
 * docs/state-machines.md. Any unfinished plan can be cancelled; `failed` and
 * `cancelled` have no way out; `completed` has one, re-opening: retrying a step
 * that failed sends the plan back to `executing` (modify_plan retry_step).
 */
export const VALID_PLAN_TRANSITIONS: Readonly<Record<PlanStatus, readonly PlanStatus[]>> = {
  planning: ["executing", "failed", "cancelled"],
  executing: ["awaiting_review", "stalled", "completed", "failed", "cancelled"],
  awaiting_review: ["executing", "failed", "cancelled"],
  stalled: ["executing", "failed", "cancelled"],
  completed: ["executing"],
  failed: [],
  cancelled: [],
};

/**
 * docs/state-machines.md. `failed -> pending` is the retry
 * path; `completed` and `skipped` are fully terminal.
 */
export const VALID_STEP_TRANSITIONS: Readonly<Record<StepStatus, readonly StepStatus[]>> = {
  pending: ["in_progress", "skipped"],
  in_progress: ["awaiting_input", "completed", "failed"],
  awaiting_input: ["in_progress", "completed", "skipped", "failed"],
  completed: [],
  skipped: [],
  failed: ["pending"],
};

// `Object.hasOwn` keeps a status string read from outside (say "toString") from
// reaching a prototype member of the table instead of a row.
function allowedTargets<S extends string>(
  table: Readonly<Record<S, readonly S[]>>,
  from: S,
): readonly S[] {
  return Object.hasOwn(table, from) ? table[from] : [];
}

export function canTransitionPlan(from: PlanStatus, to: PlanStatus): boolean {
  return allowedTargets(VALID_PLAN_TRANSITIONS, from).includes(to);
}

export function canTransitionStep(from: StepStatus, to: StepStatus): boolean {
  return allowedTargets(VALID_STEP_TRANSITIONS, from).includes(to);
}

function invalidTransition<S extends string>(
  entity: "plan" | "step",
  table: Readonly<Record<S, readonly S[]>>,
  from: S,
  to: S,
): AppError {
  const allowed = allowedTargets(table, from);
  // The message is read by an LLM as well as by people, so it names what would
  // have been allowed, not only what was refused.
  const hint =
    allowed.length === 0
      ? `${from} is terminal`
      : `from ${from} it may move to ${allowed.join(", ")}`;
  return new AppError(
    "INVALID_TRANSITION",
    `Cannot move a ${entity} from ${from} to ${to} (${hint})`,
    {
      entity,
      from,
      to,
    },
  );
}

/**
 * Returns `to` when the move is in the table, else throws INVALID_TRANSITION.
 * A throw here means the calling code has a bug (docs/state-machines.md, "Transition
 * Functions"); use `canTransitionPlan` where refusal is a normal path.
 */
export function transitionPlan(from: PlanStatus, to: PlanStatus): PlanStatus {
  if (!canTransitionPlan(from, to)) {
    throw invalidTransition("plan", VALID_PLAN_TRANSITIONS, from, to);
  }
  return to;
}

export function transitionStep(from: StepStatus, to: StepStatus): StepStatus {
  if (!canTransitionStep(from, to)) {
    throw invalidTransition("step", VALID_STEP_TRANSITIONS, from, to);
  }
  return to;
}

export function isTerminalStepStatus(status: StepStatus): boolean {
  return (TERMINAL_STEP_STATUSES as readonly StepStatus[]).includes(status);
}

export function isTerminalPlanStatus(status: PlanStatus): boolean {
  return (TERMINAL_PLAN_STATUSES as readonly PlanStatus[]).includes(status);
}

/**
 * The plan status implied by its steps (docs/state-machines.md, "Derived Plan
 * Status"). The rules run in strict order:
 *
 * 1. no steps -> `planning`;
 * 2. any `awaiting_input` -> `awaiting_review` (wins even over failed steps);
 * 3. all terminal, failed included -> `completed` (a failed step never fails the
 *    plan; only a branching `fail` or a user `reject` does);
 * 4. otherwise -> `executing`.
 *
 * It never answers `stalled` or `failed`: those come from stall detection and
 * explicit failure, not from the step states.
 */
export function derivePlanStatus(stepStatuses: readonly StepStatus[]): PlanStatus {
  if (stepStatuses.length === 0) return "planning";
  if (stepStatuses.includes("awaiting_input")) return "awaiting_review";
  if (stepStatuses.every(isTerminalStepStatus)) return "completed";
  return "executing";
}

/**
 * The valid moves that take a plan from `from` to `to`: `[to]` when the move is
 * direct, `["executing", to]` when the plan must first resume. A plan that is
 * `planning`, `stalled` or `awaiting_review` resumes to `executing` before it can
 * complete (docs/state-machines.md has no direct move from those to `completed`), so a
 * service that derives `completed` from the steps walks both moves, each one
 * checked against the table. Throws INVALID_TRANSITION when no such path exists.
 */
export function planTransitionPath(from: PlanStatus, to: PlanStatus): PlanStatus[] {
  if (from === to) return [];
  if (canTransitionPlan(from, to)) return [to];
  // Re-opening a completed plan is its own act (retry_step), never a detour on the way elsewhere.
  if (
    from !== "completed" &&
    canTransitionPlan(from, "executing") &&
    canTransitionPlan("executing", to)
  ) {
    return ["executing", to];
  }
  return [transitionPlan(from, to)];
}
