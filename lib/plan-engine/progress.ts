/**
 * Progress and stall predicates for `get_plan_status` (docs/state-machines.md:
 * `stalled` is set when the plan is read). The reference design names progress
 * and stalls without defining them, so the choices below are Cairn's.
 */
import type { StepStatus } from "./states";
import { isTerminalStepStatus } from "./transitions";

export interface PlanProgress {
  /** Share of steps in a terminal state, an integer from 0 to 100. */
  readonly percent: number;
  readonly total: number;
  readonly pending: number;
  readonly inProgress: number;
  readonly awaitingInput: number;
  readonly completed: number;
  readonly skipped: number;
  readonly failed: number;
}

/**
 * `percent` is `round(100 * terminal / total)`, 0 for a plan without steps.
 * Terminal includes `failed` and `skipped`, matching `derivePlanStatus`: the plan
 * is done when every step is terminal, so that is when progress reads 100.
 *
 * Rounding alone could show 100 with a step still open (199 of 200) or 0 with
 * one done (1 of 201); it is clamped to 1..99 while the plan is partly done so
 * the two ends of the bar keep their meaning.
 */
export function computeProgress(stepStatuses: readonly StepStatus[]): PlanProgress {
  const counts: Record<StepStatus, number> = {
    pending: 0,
    in_progress: 0,
    awaiting_input: 0,
    completed: 0,
    skipped: 0,
    failed: 0,
  };
  let terminal = 0;
  for (const status of stepStatuses) {
    counts[status] += 1;
    if (isTerminalStepStatus(status)) terminal += 1;
  }

  const total = stepStatuses.length;
  let percent = total === 0 ? 0 : Math.round((100 * terminal) / total);
  if (terminal > 0 && terminal < total) percent = Math.min(99, Math.max(1, percent));

  return {
    percent,
    total,
    pending: counts.pending,
    inProgress: counts.in_progress,
    awaitingInput: counts.awaiting_input,
    completed: counts.completed,
    skipped: counts.skipped,
    failed: counts.failed,
  };
}

export interface TimedStep {
  readonly status: StepStatus;
  readonly startedAt: Date | null;
}

/**
 * A step is stalled when it has been `in_progress` for strictly longer than the
 * threshold; exactly the threshold is not yet a stall. A step with no start
 * time, or an invalid one, is never called stalled: there is nothing to measure.
 * `now` is a parameter so the engine stays pure and tests control the clock.
 */
export function isStepStalled(step: TimedStep, now: Date, thresholdSeconds: number): boolean {
  if (step.status !== "in_progress" || step.startedAt === null) return false;
  return now.getTime() - step.startedAt.getTime() > thresholdSeconds * 1000;
}

export interface StallCandidate extends TimedStep {
  readonly id: string;
  readonly stepOrder: number;
}

export interface StallWarning {
  readonly stepId: string;
  readonly stepOrder: number;
  /** Whole seconds since the step started, rounded down. */
  readonly inProgressSeconds: number;
}

/** One warning per stalled step, in step order. */
export function stallWarnings(
  steps: readonly StallCandidate[],
  now: Date,
  thresholdSeconds: number,
): StallWarning[] {
  const warnings: StallWarning[] = [];
  for (const step of steps) {
    if (step.startedAt === null || !isStepStalled(step, now, thresholdSeconds)) continue;
    warnings.push({
      stepId: step.id,
      stepOrder: step.stepOrder,
      inProgressSeconds: Math.floor((now.getTime() - step.startedAt.getTime()) / 1000),
    });
  }
  return warnings.sort((a, b) => a.stepOrder - b.stepOrder);
}
