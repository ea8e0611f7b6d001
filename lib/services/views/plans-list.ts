/**
 * The plans list with its filters and paging, and the count of plans waiting
 * for a person's decision (the navigation's inbox badge). Reads only, scoped
 * to the tenant.
 */
import "server-only";
import { and, count, eq, ilike, notInArray, or, sql } from "drizzle-orm";
import { z } from "zod";
import { selectRows } from "../../db/rows";
import { researchPlans } from "../../db/schema";
import { arrayParam, isoTime } from "../../db/statement";
import { computeProgress, stallWarnings } from "../../plan-engine/progress";
import { PLAN_STATUSES, type PlanStatus, TERMINAL_PLAN_STATUSES } from "../../plan-engine/states";
import { hasStalledStep, stallClock } from "../plans/mark-stalled-plans";
import { dueWhere } from "../reviews/deadline-actions";
import { actingUserId, type ServiceContext } from "../shared/context";
import { cursorField, keyset, readPage } from "../shared/pagination";
import { parseInput } from "../shared/validation";
import { shorten } from "./full-values";
import { snoozedFor } from "./snoozed-reviews";
import { stepSummariesOf } from "./step-summaries";

/** "active" (planning or executing), then each later status on its own, in the engine's order. */
export const PLAN_FILTERS = [
  "active",
  ...PLAN_STATUSES.filter(
    (status): status is Exclude<PlanStatus, "planning" | "executing"> =>
      status !== "planning" && status !== "executing",
  ),
] as const;
export type PlanFilter = (typeof PLAN_FILTERS)[number];

export const listPlansInput = z.object({
  filter: z.enum(PLAN_FILTERS).optional(),
  q: z.string().trim().max(200).optional(),
  cursor: cursorField,
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
});

/**
 * How much of a plan's question the plans list shows (two lines of it are
 * seen): 100 plans a page with 5,000-character questions would be megabytes.
 */
const LIST_QUESTION_CHARS = 300;

const lastActivityRow = z.object({ planId: z.string(), last: isoTime });

export async function listPlans(ctx: ServiceContext, raw: z.input<typeof listPlansInput>) {
  const input = parseInput(listPlansInput, raw);
  const now = new Date();
  const stalledStep = hasStalledStep(sql`${researchPlans.id}`, ctx);
  const conditions = [eq(researchPlans.tenantId, ctx.tenantId)];
  if (input.filter === "active") {
    conditions.push(notInArray(researchPlans.status, [...TERMINAL_PLAN_STATUSES]));
  } else if (input.filter === "stalled") {
    // Stalled as the UI shows it: marked so, or executing with a step its holder stopped renewing.
    conditions.push(
      or(
        eq(researchPlans.status, "stalled"),
        and(eq(researchPlans.status, "executing"), stalledStep),
      ) ?? sql`false`,
    );
  } else if (input.filter) {
    conditions.push(eq(researchPlans.status, input.filter));
  }
  if (input.q) {
    const pattern = `%${input.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(
      or(ilike(researchPlans.name, pattern), ilike(researchPlans.researchQuestion, pattern)) ??
        sql`false`,
    );
  }
  const where = and(...conditions);
  const page = keyset(
    { list: "plans page", at: researchPlans.updatedAt, id: researchPlans.id },
    input.cursor,
  );
  const [total] = await ctx.db.select({ n: count() }).from(researchPlans).where(where);
  const { items: plans, nextCursor } = await readPage(
    ctx.db,
    researchPlans,
    where,
    page,
    input.pageSize,
  );
  const ids = plans.map((p) => p.id);
  const stepsOf = await stepSummariesOf(ctx, ids, {});
  // Each plan's newest row of its trail, by its place in the chain: one index
  // entry a plan, where a max over the trail read every row of it.
  const activity =
    ids.length === 0
      ? []
      : await selectRows(
          ctx.db,
          lastActivityRow,
          sql`select p.id as "planId", newest.created_at as last
            from unnest(${arrayParam(ids)}::uuid[]) as p(id)
            cross join lateral (select created_at from plan_audit_log
              where plan_id = p.id and tenant_id = ${ctx.tenantId} and chain_index is not null
              order by chain_index desc limit 1) newest`,
        );
  const lastOf = new Map(activity.map((a) => [a.planId, a.last]));
  return {
    ...input,
    total: total?.n ?? 0,
    nextCursor,
    plans: plans.map((plan) => {
      const own = stepsOf.get(plan.id) ?? [];
      const last = lastOf.get(plan.id);
      const lastActivity = last ? new Date(last) : plan.updatedAt;
      return {
        planId: plan.id,
        name: plan.name,
        researchQuestion: shownQuestion(plan.researchQuestion),
        status: plan.status,
        progress: computeProgress(own.map((s) => s.status)),
        stallWarnings: stallWarnings(own, now, stallClock(ctx)),
        lastActivityAt: (lastActivity > plan.updatedAt
          ? lastActivity
          : plan.updatedAt
        ).toISOString(),
      };
    }),
  };
}

function shownQuestion(question: string): string {
  const shown = shorten(question, LIST_QUESTION_CHARS);
  return shown.shortened ? `${shown.text}…` : shown.text;
}

export type PlanListItem = Awaited<ReturnType<typeof listPlans>>["plans"][number];

/**
 * The reviewer's inbox: plans of the tenant waiting for a person's decision,
 * but for those whose review the viewer snoozed (docs/reviews.md, "Snooze")
 * and those whose every review is past its deadline (applied by the
 * scheduler, and listed by the inbox no more).
 */
export async function countAwaitingReview(ctx: ServiceContext): Promise<number> {
  const [row] = await ctx.db
    .select({ n: count() })
    .from(researchPlans)
    .where(
      and(
        eq(researchPlans.tenantId, ctx.tenantId),
        eq(researchPlans.status, "awaiting_review"),
        sql`not exists (select 1 from review_request r where r.plan_id = ${researchPlans.id}
          and r.status = 'pending' and ${snoozedFor(sql`r.id`, actingUserId(ctx))})`,
        sql`exists (select 1 from review_request r where r.plan_id = ${researchPlans.id}
          and r.status = 'pending' and not (${dueWhere}))`,
      ),
    );
  return row?.n ?? 0;
}
