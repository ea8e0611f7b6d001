/**
 * What the pages' lists of plans read of their plans' steps (the plans list,
 * the admin's stalled plans): the columns progress and stall warnings take,
 * with any extra column a list shows, in step order, grouped by plan. One
 * statement for the page's plans, however many.
 */
import "server-only";
import { and, asc, eq, inArray } from "drizzle-orm";
import type { SelectedFields } from "drizzle-orm/pg-core";
import { planSteps } from "../../db/schema";
import type { ServiceContext } from "../shared/context";

const SUMMARY = {
  id: planSteps.id,
  planId: planSteps.planId,
  stepOrder: planSteps.stepOrder,
  status: planSteps.status,
  startedAt: planSteps.startedAt,
  leaseExpiresAt: planSteps.leaseExpiresAt,
  updatedAt: planSteps.updatedAt,
};

export async function stepSummariesOf<Extra extends SelectedFields>(
  ctx: ServiceContext,
  planIds: string[],
  extra: Extra,
) {
  const rows =
    planIds.length === 0
      ? []
      : await ctx.db
          .select({ ...SUMMARY, ...extra })
          .from(planSteps)
          .where(and(eq(planSteps.tenantId, ctx.tenantId), inArray(planSteps.planId, planIds)))
          .orderBy(asc(planSteps.stepOrder));
  const byPlan = new Map<string, typeof rows>();
  for (const row of rows) {
    const own = byPlan.get(row.planId);
    if (own) own.push(row);
    else byPlan.set(row.planId, [row]);
  }
  return byPlan;
}
