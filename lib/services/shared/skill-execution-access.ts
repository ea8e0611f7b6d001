/**
 * Tenant-scoped loading of skill-execution tracking records, like plan-access.ts
 * for plans: another tenant's id answers NOT_FOUND and reveals nothing.
 */
import "server-only";
import { and, desc, eq } from "drizzle-orm";
import type { Executor, Transaction } from "../../db/client";
import { sameTenant } from "../../db/same-tenant";
import { skillExecutions } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import type { ServiceContext } from "./context";

export type SkillExecutionRow = typeof skillExecutions.$inferSelect;

export function executionNotFound(executionId: string): AppError {
  return new AppError(
    "NOT_FOUND",
    `No skill execution ${executionId} exists for this account. Use the executionId that log_skill_execution returned, or get_research_context's skillExecution.executionId.`,
    { executionId },
  );
}

const executionWhere = (ctx: ServiceContext, executionId: string) =>
  and(eq(skillExecutions.id, executionId), sameTenant(skillExecutions.tenantId, ctx.tenantId));

export async function lockSkillExecution(
  tx: Transaction,
  ctx: ServiceContext,
  executionId: string,
): Promise<SkillExecutionRow> {
  const [row] = await tx
    .select()
    .from(skillExecutions)
    .where(executionWhere(ctx, executionId))
    .for("update");
  if (!row) throw executionNotFound(executionId);
  return row;
}

/**
 * The execution a deliverable or a feedback row belongs to: the one given,
 * which must be this plan's (or not yet linked to any plan), or else the plan's
 * linked execution, the newest if several, or none.
 */
export async function executionForPlan(
  db: Executor,
  ctx: ServiceContext,
  planId: string,
  executionId: string | undefined,
): Promise<string | null> {
  if (executionId) {
    const [row] = await db
      .select({ id: skillExecutions.id, planId: skillExecutions.planId })
      .from(skillExecutions)
      .where(executionWhere(ctx, executionId));
    if (!row) throw executionNotFound(executionId);
    if (row.planId !== null && row.planId !== planId) {
      throw new AppError(
        "VALIDATION_ERROR",
        `executionId: skill execution ${executionId} belongs to plan ${row.planId}, not to plan ${planId}. Omit executionId to use the plan's own.`,
        { executionId, planId, linkedPlanId: row.planId },
      );
    }
    return row.id;
  }
  const [linked] = await db
    .select({ id: skillExecutions.id })
    .from(skillExecutions)
    .where(and(eq(skillExecutions.planId, planId), eq(skillExecutions.tenantId, ctx.tenantId)))
    .orderBy(desc(skillExecutions.createdAt))
    .limit(1);
  return linked?.id ?? null;
}
