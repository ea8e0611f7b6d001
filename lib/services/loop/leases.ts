/**
 * Leases: how long a hand-out holds its step, which steps are free to hand out,
 * when a lease starts again, and when it ends. The rule itself is the engine's
 * (`isClaimable` in lib/plan-engine/claims.ts); this module is its SQL form and
 * the lease writes, so a change to the lease rule is made here and in the
 * engine, and tests/use-cases/claim-rule.test.ts fails until both agree.
 *
 * Where a lease is written:
 * - starts: a hand-out (`claim-next-step.ts`, `claim-step.ts`), for `leaseSeconds`;
 * - starts again: a call that names the step in progress (`renewLease`, from
 *   get_step_context);
 * - ends (`lease_expires_at = null` with the step's new status): a result
 *   (`complete-step-guarded.ts`, `complete-step.ts`), a review decision (the step
 *   leaves awaiting_input; a modify hands it back released), modify_plan's
 *   fail (lib/services/plans/modify-plan.ts), and a cancel (`endLeases`). A
 *   step in progress with no expiry is free: the claim rule hands it out again.
 *
 * Lock order, as everywhere: the plan row first, then its steps.
 */
import "server-only";
import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { planSteps } from "../../db/schema";
import { isoTime, run, sqlLiterals, statement } from "../../db/statement";
import { UNDECIDED_CHECKPOINT_STATUSES } from "../../plan-engine/checkpoint-guard";
import { HANDED_OUT_STATUS } from "../../plan-engine/claims";
import { OPEN_STEP_STATUSES } from "../../plan-engine/states";
import type { ServiceContext } from "../shared/context";
import { planOfTenant, STEP_OF_LOCKED_PLAN } from "./plan-lock";

/** How long a hand-out holds its step: CAIRN_STEP_LEASE_SECONDS, else the stall threshold. */
export function leaseSeconds(
  ctx: Pick<ServiceContext, "stepLeaseSeconds" | "stallThresholdSeconds">,
): number {
  return ctx.stepLeaseSeconds ?? ctx.stallThresholdSeconds;
}

/**
 * No checkpoint nobody has decided comes before the step at `stepOrder` of the
 * plan `plan` (SQL expressions; the engine's `holdsStepsAfter`): the plan's
 * first undecided checkpoint, if any, is not before it. Checked beside
 * `claimableStep`, so two callers racing for a pending checkpoint (one skips
 * the row the other locked) never take the step after it, and by the
 * one-statement submit. Where `plan` does not depend on the row (the claim's
 * and the submit's plan `$1`), PostgreSQL reads the first checkpoint once per
 * statement, not once per candidate step, from the index of undecided
 * checkpoints (`plan_step_undecided_checkpoint_idx`).
 */
export function notHeldByCheckpoint(plan: string, stepOrder: string): string {
  return `${stepOrder} <= coalesce((select min(held.step_order) from plan_step held
      where held.plan_id = ${plan} and held.step_type = 'checkpoint'
        and held.status in (${sqlLiterals(UNDECIDED_CHECKPOINT_STATUSES)})), ${stepOrder})`;
}

/**
 * The row `alias` is one of its plan's open steps (`OPEN_STEP_STATUSES`), in
 * the words of `plan_step_open_idx`'s predicate, so PostgreSQL reads the
 * plan's open steps from that index in order. Said beside `claimableStep`,
 * which implies it, so that the statement states the index's predicate in its
 * own words rather than leaving the planner to prove it from the claim rule's
 * OR; the submit's question whether another step is open is asked in it.
 */
export function openStep(alias: string): string {
  return `${alias}.status in (${sqlLiterals(OPEN_STEP_STATUSES)})`;
}

/**
 * The claim rule over a plan_step row `alias`, at the time `now` (an SQL
 * expression): pending, or handed out with no live lease. Text, for the fixed
 * statements that embed it.
 */
export function claimableStep(alias: string, now: string): string {
  return `(${alias}.status = 'pending'
    or (${alias}.status = '${HANDED_OUT_STATUS}'
      and coalesce(${alias}.lease_expires_at, '-infinity') <= ${now}))`;
}

/** A new lease from `now` for `seconds` (SQL expressions). */
export function leaseUntil(now: string, seconds: string): string {
  return `${now} + make_interval(secs => ${seconds})`;
}

const renewal = statement(
  "renew lease",
  `with plan as materialized (
    select id from research_plan where ${planOfTenant("research_plan")}
    for share
  )
  update plan_step set lease_expires_at = ${leaseUntil("now()", "$4::int")},
    attempt = greatest(attempt, 1)
  where ${STEP_OF_LOCKED_PLAN}
    and status = '${HANDED_OUT_STATUS}'
  returning lease_expires_at as "leaseExpiresAt"`,
  z.object({ leaseExpiresAt: isoTime }),
);

/**
 * A call that names a step in progress shows its holder is still at work, so
 * the step's lease starts again (a released step, one a reviewer sent back, is
 * taken by the caller). The plan row is held in share mode first (the lock
 * order of every loop write), so a renewal waits for a submit or decision in
 * progress and never holds the step against one. Returns the new expiry, or
 * null when the step is not in progress.
 */
export async function renewLease(
  tx: Transaction,
  ctx: ServiceContext,
  planId: string,
  stepId: string,
): Promise<string | null> {
  const [row] = await run(tx, renewal, [planId, ctx.tenantId, stepId, leaseSeconds(ctx)]);
  return row?.leaseExpiresAt ?? null;
}

/** A cancel: the leases of the plan's steps in progress end (the plan is locked by the caller). */
export async function endLeases(tx: Transaction, stepIds: string[], now: Date): Promise<void> {
  if (stepIds.length === 0) return;
  await tx
    .update(planSteps)
    .set({ leaseExpiresAt: null, updatedAt: now })
    .where(and(inArray(planSteps.id, stepIds), eq(planSteps.status, HANDED_OUT_STATUS)));
}
