/**
 * The admin's view of work that needs a person: stalled plans, plans holding a
 * failed step or waiting for their agent's steps, and paused ones. Reads only,
 * scoped to the tenant.
 */
import "server-only";
import { and, eq, getTableColumns, inArray, isNotNull, notInArray, or, sql } from "drizzle-orm";
import { z } from "zod";
import { planSteps, researchPlans } from "../../db/schema";
import { failingEndsPlan } from "../../plan-engine/modify";
import { stallWarnings } from "../../plan-engine/progress";
import { TERMINAL_PLAN_STATUSES } from "../../plan-engine/states";
import { hasStalledStep, stallClock } from "../plans/mark-stalled-plans";
import type { ServiceContext } from "../shared/context";
import { cursorField, keyset } from "../shared/pagination";
import { parseInput } from "../shared/validation";
import { stepSummariesOf } from "./step-summaries";

export const stalledPlansInput = z.object({ cursor: cursorField });

/** How many plans one page of the stalled plans reads at most, least recently active first. */
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
 * reasons: a page reads at most STALLED_PLANS_READ plans from `cursor`, each
 * step without its long values but the failure reason's beginning, and shows
 * the cards that fit in STALLED_PAGE_BYTES, with the cursor of the next page.
 */
export async function listStalledPlans(
  ctx: ServiceContext,
  raw: z.input<typeof stalledPlansInput> = {},
) {
  const input = parseInput(stalledPlansInput, raw);
  const now = new Date();
  const page = keyset(
    {
      list: "stalled plans",
      at: researchPlans.updatedAt,
      id: researchPlans.id,
      direction: "asc",
    },
    input.cursor,
  );
  const candidates = await ctx.db
    .select({ ...getTableColumns(researchPlans), ...page.position })
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
        page.where,
      ),
    )
    .orderBy(...page.orderBy)
    .limit(STALLED_PLANS_READ + 1);
  // The plan past the page too, if there is one: its card tells fitOf that more follow.
  const ids = candidates.map((p) => p.id);
  const stepsOf = await stepSummariesOf(ctx, ids, {
    failureReason: sql<
      string | null
    >`left(${planSteps.failureReason}, ${sql.raw(String(STALLED_REASON_CHARS))})`,
    failureReasonCut: sql<boolean>`coalesce(char_length(${planSteps.failureReason}) > ${sql.raw(String(STALLED_REASON_CHARS))}, false)`,
  });
  const cards = candidates.map((plan) => {
    const own = stepsOf.get(plan.id) ?? [];
    return {
      positionAt: plan.positionAt,
      positionId: plan.positionId,
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
  const { items, nextCursor } = page.fitOf(
    cards,
    STALLED_PLANS_READ,
    STALLED_PAGE_BYTES,
    ({ positionAt, positionId, ...card }) => card,
  );
  const shown = items.map(({ positionAt, positionId, ...card }) => card);
  return {
    cursor: input.cursor ?? null,
    nextCursor,
    stalled: shown.filter((card) => !card.pauseReason),
    paused: shown.flatMap(({ pauseReason, ...card }) =>
      pauseReason ? [{ ...card, pauseReason }] : [],
    ),
  };
}

export type StalledPlans = Awaited<ReturnType<typeof listStalledPlans>>;
