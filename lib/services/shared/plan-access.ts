/**
 * Tenant-scoped loading and locking. Every lookup carries the tenant in its
 * `where`, so another tenant's id answers NOT_FOUND and reveals nothing. Locks are
 * always taken plan first, then step (the order that keeps concurrent calls free
 * of deadlocks).
 */
import "server-only";
import { and, asc, eq } from "drizzle-orm";
import type { Executor, Transaction } from "../../db/client";
import { samePlan, sameTenant } from "../../db/same-tenant";
import { planSteps, researchPlans } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { checkPlanTakesWork, type PlanWork } from "../../plan-engine/checkpoint-guard";
import { planStatusAfter } from "../../plan-engine/plan-status";
import type { PlanStatus } from "../../plan-engine/states";
import { isTerminalPlanStatus } from "../../plan-engine/transitions";
import { planStatusEvent, queueEvent } from "../notifications/events";
import type { ServiceContext } from "./context";

/** Lookups need only the tenant. */
type Tenant = Pick<ServiceContext, "tenantId">;

export type PlanRow = typeof researchPlans.$inferSelect;
export type StepRow = typeof planSteps.$inferSelect;

export function planNotFound(planId: string): AppError {
  return new AppError(
    "NOT_FOUND",
    `No plan ${planId} exists for this account. Call list_active_plans to see the plans you can use.`,
    { planId },
  );
}

export function stepNotFound(planId: string, stepId: string): AppError {
  return new AppError(
    "NOT_FOUND",
    `Plan ${planId} has no step ${stepId}. Call get_research_context to see the plan's steps and their ids.`,
    { planId, stepId },
  );
}

const planWhere = (ctx: Tenant, planId: string) =>
  and(eq(researchPlans.id, planId), sameTenant(researchPlans.tenantId, ctx.tenantId));

export async function getPlan(db: Executor, ctx: Tenant, planId: string) {
  const [plan] = await db.select().from(researchPlans).where(planWhere(ctx, planId));
  if (!plan) throw planNotFound(planId);
  return plan;
}

/**
 * Locks the plan row. `update` for any call that changes the plan's status;
 * `share` for get_next_step, so many agents can claim steps of one plan at once
 * while a status change (submit, decision, modify) waits for them and they for it.
 */
export async function lockPlan(
  tx: Transaction,
  ctx: Tenant,
  planId: string,
  mode: "update" | "share" = "update",
) {
  const [plan] = await tx.select().from(researchPlans).where(planWhere(ctx, planId)).for(mode);
  if (!plan) throw planNotFound(planId);
  return plan;
}

/**
 * Locks the plan (for update: the evidence this work may record takes the
 * same lock, and taking a share first would let two callers deadlock on the
 * upgrade) and checks that its state takes `work` (the checkpoint rule's third part,
 * `checkPlanTakesWork`), for `stepId` when the work names a step. Returns the
 * plan and that step.
 */
export async function lockPlanForWork(
  tx: Transaction,
  ctx: Tenant,
  planId: string,
  work: PlanWork,
  stepId?: string,
) {
  const plan = await lockPlan(tx, ctx, planId);
  const steps = await tx
    .select({
      id: planSteps.id,
      stepOrder: planSteps.stepOrder,
      stepType: planSteps.stepType,
      status: planSteps.status,
    })
    .from(planSteps)
    .where(and(eq(planSteps.planId, plan.id), eq(planSteps.tenantId, ctx.tenantId)));
  const step = stepId === undefined ? undefined : steps.find((s) => s.id === stepId);
  if (stepId !== undefined && !step) throw stepNotFound(planId, stepId);
  checkPlanTakesWork({ id: plan.id, status: plan.status, steps }, work, step);
  return { plan, step };
}

const stepWhere = (ctx: Tenant, planId: string, stepId: string) =>
  and(
    eq(planSteps.id, stepId),
    samePlan(planSteps.planId, planId),
    sameTenant(planSteps.tenantId, ctx.tenantId),
  );

export async function getStep(db: Executor, ctx: Tenant, planId: string, stepId: string) {
  const [step] = await db
    .select()
    .from(planSteps)
    .where(stepWhere(ctx, planId, stepId));
  if (!step) throw stepNotFound(planId, stepId);
  return step;
}

export async function lockStep(tx: Transaction, ctx: Tenant, planId: string, stepId: string) {
  const [step] = await tx
    .select()
    .from(planSteps)
    .where(stepWhere(ctx, planId, stepId))
    .for("update");
  if (!step) throw stepNotFound(planId, stepId);
  return step;
}

export async function loadSteps(db: Executor, ctx: Tenant, planId: string) {
  return db
    .select()
    .from(planSteps)
    .where(and(eq(planSteps.planId, planId), eq(planSteps.tenantId, ctx.tenantId)))
    .orderBy(asc(planSteps.stepOrder));
}

/** A plan's checkpoints, what the checkpoint rule's hold reads (`checkNotHeldByCheckpoint`). */
export function loadCheckpoints(db: Executor, ctx: Tenant, planId: string) {
  return db
    .select({
      stepOrder: planSteps.stepOrder,
      stepType: planSteps.stepType,
      status: planSteps.status,
    })
    .from(planSteps)
    .where(
      and(
        eq(planSteps.planId, planId),
        eq(planSteps.tenantId, ctx.tenantId),
        eq(planSteps.stepType, "checkpoint"),
      ),
    );
}

/** A plan's steps in order without their results or reports: what progress and stalls need. */
export function loadStepSummaries(db: Executor, ctx: Tenant, planId: string) {
  return db
    .select({
      id: planSteps.id,
      stepOrder: planSteps.stepOrder,
      stepType: planSteps.stepType,
      status: planSteps.status,
      startedAt: planSteps.startedAt,
      leaseExpiresAt: planSteps.leaseExpiresAt,
      updatedAt: planSteps.updatedAt,
    })
    .from(planSteps)
    .where(and(eq(planSteps.planId, planId), eq(planSteps.tenantId, ctx.tenantId)))
    .orderBy(asc(planSteps.stepOrder));
}

/**
 * Moves a locked plan to `to` through valid transitions only (see
 * `planTransitionPath`), stamping `completedAt` when it completes, and queues
 * the event the move raises (`planStatusEvent`: plan.completed, plan.failed,
 * plan.stalled).
 */
export async function setPlanStatusAndQueueEvent(
  tx: Transaction,
  plan: { id: string; tenantId: string; status: PlanStatus },
  to: PlanStatus,
  now: Date,
): Promise<PlanStatus> {
  const status = planStatusAfter(plan.status, to);
  await tx
    .update(researchPlans)
    .set({
      status: to,
      updatedAt: now,
      // A re-opened plan (completed -> executing) has not ended any more.
      ...(isTerminalPlanStatus(to)
        ? { completedAt: now }
        : isTerminalPlanStatus(plan.status)
          ? { completedAt: null }
          : {}),
    })
    .where(eq(researchPlans.id, plan.id));
  const event = plan.status === to ? undefined : planStatusEvent(to);
  if (event) await queueEvent(tx, plan.tenantId, event, plan.id, {});
  return status;
}
