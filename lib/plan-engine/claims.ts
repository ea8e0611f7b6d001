/**
 * The claim rule: which step get_next_step hands out (docs/execution-loop.md).
 * A step is free when it is pending, or in progress with no live lease (its
 * lease ran out, or a reviewer's modify released it: no expiry); the plan's
 * first free step in step order is the one handed out, unless a checkpoint
 * nobody has decided comes before it (docs/reviews.md). The SQL form of the
 * same rule is `claimableStep` and `notHeldByCheckpoint` in
 * lib/services/loop/leases.ts, and tests/use-cases/claim-rule.test.ts checks on
 * both databases that the two agree.
 */
import { holdsStepsAfter } from "./checkpoint-guard";
import type { StepStatus, StepType } from "./states";
import { transitionStep } from "./transitions";

/** The status a hand-out moves a step to (checked against the step state machine at load). */
export const HANDED_OUT_STATUS: StepStatus = transitionStep("pending", "in_progress");

export type ClaimableStep = {
  readonly status: StepStatus;
  readonly leaseExpiresAt: Date | null;
};

export function isClaimable(step: ClaimableStep, now: Date): boolean {
  if (step.status === "pending") return true;
  return (
    step.status === HANDED_OUT_STATUS &&
    (step.leaseExpiresAt === null || step.leaseExpiresAt.getTime() <= now.getTime())
  );
}

/**
 * The step a hand-out would take now: the first claimable one in step order,
 * unless a checkpoint nobody has decided comes before it.
 */
export function firstClaimable<
  S extends ClaimableStep & { readonly stepOrder: number; readonly stepType: StepType },
>(steps: readonly S[], now: Date): S | undefined {
  for (const step of [...steps].sort((a, b) => a.stepOrder - b.stepOrder)) {
    if (isClaimable(step, now)) return step;
    if (holdsStepsAfter(step)) return undefined;
  }
  return undefined;
}
