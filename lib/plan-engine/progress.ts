/**
 * Progress and stall predicates for `get_plan_status`, the views and the
 * scheduler that marks stalled plans (docs/state-machines.md, "Stalls"). The reference design names progress
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
  /** Until when the step's holder holds it; every hand-out and get_step_context renews it. */
  readonly leaseExpiresAt: Date | null;
  /** The step's last change: when a step has no lease (a reviewer sent it back), its last sign of life. */
  readonly updatedAt: Date | null;
}

/**
 * Sent back: a person's modify returned the step to the agent with feedback,
 * and no agent has picked it up again. The step stays `in_progress` without a
 * lease (the claim hands it out again as `redo_requested`), so its start is not
 * one a reader should show.
 */
export function isSentBack(step: Pick<TimedStep, "status" | "leaseExpiresAt">): boolean {
  return step.status === "in_progress" && step.leaseExpiresAt === null;
}

/** How long a stall takes to show: the threshold, and the length of a lease (docs/state-machines.md, "Stalls"). */
export interface StallClock {
  readonly thresholdSeconds: number;
  readonly leaseSeconds: number;
}

/**
 * When the step last showed that someone works on it: the last renewal of its
 * lease (a lease runs `leaseSeconds` from its renewal), or, without a lease,
 * its last change. Null when there is nothing to measure.
 */
export function lastSignOfLife(step: TimedStep, clock: StallClock): Date | null {
  if (step.leaseExpiresAt !== null) {
    return new Date(step.leaseExpiresAt.getTime() - clock.leaseSeconds * 1000);
  }
  return step.updatedAt ?? step.startedAt;
}

/**
 * A step is stalled when its holder stopped renewing it: it is `in_progress`
 * and its lease ran out, or it shows no sign of life for strictly longer than
 * the threshold (exactly the threshold is not yet a stall). How long ago it
 * started does not count: an agent that keeps renewing its lease through
 * get_step_context is at work, however long the step takes. A step with no
 * time to measure, or an invalid one, is never called stalled.
 * `now` is a parameter so the engine stays pure and tests control the clock.
 */
export function isStepStalled(step: TimedStep, now: Date, clock: StallClock): boolean {
  if (step.status !== "in_progress") return false;
  if (step.leaseExpiresAt !== null && step.leaseExpiresAt.getTime() <= now.getTime()) return true;
  const seen = lastSignOfLife(step, clock);
  if (seen === null) return false;
  return now.getTime() - seen.getTime() > clock.thresholdSeconds * 1000;
}

export interface StallCandidate extends TimedStep {
  readonly id: string;
  readonly stepOrder: number;
}

export interface StallWarning {
  readonly stepId: string;
  readonly stepOrder: number;
  /** Whole seconds since the step started, rounded down (0 when it has no start). */
  readonly inProgressSeconds: number;
  /** Whole seconds since its last sign of life (a lease renewal), rounded down. */
  readonly idleSeconds: number;
}

const wholeSecondsSince = (now: Date, then: Date | null) =>
  then === null ? 0 : Math.max(0, Math.floor((now.getTime() - then.getTime()) / 1000));

/** One warning per stalled step, in step order. */
export function stallWarnings(
  steps: readonly StallCandidate[],
  now: Date,
  clock: StallClock,
): StallWarning[] {
  const warnings: StallWarning[] = [];
  for (const step of steps) {
    if (!isStepStalled(step, now, clock)) continue;
    warnings.push({
      stepId: step.id,
      stepOrder: step.stepOrder,
      inProgressSeconds: wholeSecondsSince(now, step.startedAt),
      idleSeconds: wholeSecondsSince(now, lastSignOfLife(step, clock)),
    });
  }
  return warnings.sort((a, b) => a.stepOrder - b.stepOrder);
}
