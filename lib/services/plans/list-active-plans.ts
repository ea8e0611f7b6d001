/**
 * list_active_plans (docs/execution-flow.md): the tenant's
 * plans that are not completed or failed, most recently active first, with
 * their progress, so a new session can pick one to resume; a page at a time
 * (lib/services/shared/pagination.ts).
 */
import "server-only";
import { and, eq, inArray, notInArray } from "drizzle-orm";
import { z } from "zod";
import { planSteps, researchPlans } from "../../db/schema";
import { computeProgress } from "../../plan-engine/progress";
import { TERMINAL_PLAN_STATUSES } from "../../plan-engine/states";
import type { ServiceContext } from "../shared/context";
import { planStatus, progress } from "../shared/output-fields";
import { cursorField, keyset, nextCursorField, readPage } from "../shared/pagination";
import { parseInput } from "../shared/validation";

export const listActivePlansInput = z.object({
  limit: z.int().min(1).max(100).optional().describe("Default 20."),
  cursor: cursorField,
});

/** The answer: the unfinished plans with their progress (the MCP tool's output schema). */
export const activePlansOutput = z.object({
  plans: z.array(
    z.object({
      planId: z.string(),
      name: z.string(),
      researchQuestion: z.string(),
      status: planStatus,
      /** A fired add_steps waits for the agent's modify_plan add_steps (or decline_add_steps). */
      awaitingSteps: z.boolean(),
      progress,
      createdAt: z.string(),
      updatedAt: z.string(),
    }),
  ),
  nextCursor: nextCursorField,
});

export type ActivePlans = z.infer<typeof activePlansOutput>;

export async function listActivePlans(
  ctx: ServiceContext,
  raw: z.input<typeof listActivePlansInput>,
): Promise<ActivePlans> {
  const { limit = 20, cursor } = parseInput(listActivePlansInput, raw);
  const page = keyset(
    { list: "list_active_plans", at: researchPlans.updatedAt, id: researchPlans.id },
    cursor,
  );
  const { items: plans, nextCursor } = await readPage(
    ctx.db,
    researchPlans,
    and(
      eq(researchPlans.tenantId, ctx.tenantId),
      notInArray(researchPlans.status, [...TERMINAL_PLAN_STATUSES]),
    ),
    page,
    limit,
  );
  const ids = plans.map((p) => p.id);
  const steps =
    ids.length === 0
      ? []
      : await ctx.db
          .select({ planId: planSteps.planId, status: planSteps.status })
          .from(planSteps)
          .where(and(eq(planSteps.tenantId, ctx.tenantId), inArray(planSteps.planId, ids)));
  // Grouped once, so the answer is linear in the steps read.
  const statusesOf = new Map<string, (typeof steps)[number]["status"][]>();
  for (const step of steps) {
    const list = statusesOf.get(step.planId);
    if (list) list.push(step.status);
    else statusesOf.set(step.planId, [step.status]);
  }
  return {
    plans: plans.map((plan) => ({
      planId: plan.id,
      name: plan.name,
      researchQuestion: plan.researchQuestion,
      status: plan.status,
      awaitingSteps: plan.awaitingSteps !== null,
      progress: computeProgress(statusesOf.get(plan.id) ?? []),
      createdAt: plan.createdAt.toISOString(),
      updatedAt: plan.updatedAt.toISOString(),
    })),
    nextCursor,
  };
}
