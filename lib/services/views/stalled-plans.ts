/**
 * The admin's view of work that needs a person: stalled plans, plans holding a
 * failed step or waiting for their agent's steps, and paused ones. Reads only,
 * scoped to the tenant.
 */
import "server-only";
import { and, asc, eq, inArray, isNotNull, notInArray, or, sql } from "drizzle-orm";
import { planSteps, researchPlans } from "../../db/schema";
import { failingEndsPlan } from "../../plan-engine/modify";
import { stallWarnings } from "../../plan-engine/progress";
import { TERMINAL_PLAN_STATUSES } from "../../plan-engine/states";
import { hasStalledStep, stallClock } from "../plans/mark-stalled-plans";
import { fitting } from "../shared/bounded";
import type { ServiceContext } from "../shared/context";

/** How many plans the stalled plans' page reads, least recently active first. */
const STALLED_PLANS_READ = 50;
/** How much of a failed step's reason the stalled plans' page shows (the plan page shows more). */
const STALLED_REASON_CHARS = 200;
/** The most JSON text of the stalled plans' cards one page shows, as the plan page's steps. */
const STALLED_PAGE_BYTES = 48 * 1024;

/**
 * Admin: work that needs a person, least recently active first. `stalled`:
 * plans marked stalled, executing plans with a step whose holder stopped
 * renewing it, active plans holding a failed step (which retry_step can send
 * back to pending), and plans waiting for their agent to add steps (a fired
 * add_steps: the agent may have gone; an admin can cancel them). `paused`: active plans whose server-run steps stopped, with
 * the reason; a plan listed there is not listed again under `stalled`, but
 * keeps its stalled and failed steps (a tool error leaves its step failed).
 * Bounded however many plans need a person and however long their failure
 * reasons: the STALLED_PLANS_READ least recently active plans are read, each
 * step without its long values but the failure reason's beginning, and the
 * cards shown are those that fit in STALLED_PAGE_BYTES (`more`: whether
 * others wait; they show here as these are dealt with).
 */
export async function listStalledPlans(ctx: ServiceContext) {
  const now = new Date();
  const candidates = await ctx.db
    .select()
    .from(researchPlans)
    .where(
      and(
        eq(researchPlans.tenantId, ctx.tenantId),
        or(
          eq(researchPlans.status, "stalled"),
          and(eq(researchPlans.status, "executing"), hasStalledStep(sql`${researchPlans.id}`, ctx)),
          and(
            inArray(researchPlans.status, ["planning", "executing"]),
            sql`exists (select 1 from ${planSteps} where ${planSteps.planId} = ${researchPlans.id} and ${planSteps.status} = 'failed')`,
          ),
          and(
            notInArray(researchPlans.status, [...TERMINAL_PLAN_STATUSES]),
            isNotNull(researchPlans.pauseReason),
          ),
          and(
            notInArray(researchPlans.status, [...TERMINAL_PLAN_STATUSES]),
            isNotNull(researchPlans.awaitingSteps),
          ),
        ),
      ),
    )
    .orderBy(asc(researchPlans.updatedAt), asc(researchPlans.id))
    .limit(STALLED_PLANS_READ + 1);
  const read = candidates.slice(0, STALLED_PLANS_READ);
  const ids = read.map((p) => p.id);
  const steps =
    ids.length === 0
      ? []
      : await ctx.db
          .select({
            id: planSteps.id,
            planId: planSteps.planId,
            stepOrder: planSteps.stepOrder,
            status: planSteps.status,
            startedAt: planSteps.startedAt,
            leaseExpiresAt: planSteps.leaseExpiresAt,
            updatedAt: planSteps.updatedAt,
            failureReason: sql<
              string | null
            >`left(${planSteps.failureReason}, ${sql.raw(String(STALLED_REASON_CHARS))})`,
            failureReasonCut: sql<boolean>`coalesce(char_length(${planSteps.failureReason}) > ${sql.raw(String(STALLED_REASON_CHARS))}, false)`,
          })
          .from(planSteps)
          .where(and(eq(planSteps.tenantId, ctx.tenantId), inArray(planSteps.planId, ids)))
          .orderBy(asc(planSteps.stepOrder));
  const stepsOf = new Map<string, typeof steps>();
  for (const step of steps) {
    const own = stepsOf.get(step.planId);
    if (own) own.push(step);
    else stepsOf.set(step.planId, [step]);
  }
  const cards = read.map((plan) => {
    const own = stepsOf.get(plan.id) ?? [];
    return {
      planId: plan.id,
      name: plan.name,
      status: plan.status,
      lastActivityAt: plan.updatedAt.toISOString(),
      stalledSteps: stallWarnings(own, now, stallClock(ctx)).map((warning) => ({
        ...warning,
        failEndsPlan: failingEndsPlan(plan, own, warning.stepId),
      })),
      failedSteps: own
        .filter((s) => s.status === "failed")
        .map((s) => ({
          stepId: s.id,
          stepOrder: s.stepOrder,
          failureReason:
            s.failureReason && s.failureReasonCut ? `${s.failureReason}…` : s.failureReason,
        })),
      pauseReason: plan.pauseReason,
      awaitingSteps: plan.awaitingSteps,
    };
  });
  const shown = cards.slice(0, fitting(cards, STALLED_PAGE_BYTES));
  return {
    more: shown.length < candidates.length,
    stalled: shown.filter((card) => !card.pauseReason),
    paused: shown.flatMap(({ pauseReason, ...card }) =>
      pauseReason ? [{ ...card, pauseReason }] : [],
    ),
  };
}

export type StalledPlans = Awaited<ReturnType<typeof listStalledPlans>>;
