/**
 * get_next_step (execution-loop.md, "Getting the next step"). Hands out the
 * first pending step of a plan to exactly one caller, however many pull at once:
 * the step is claimed with `FOR UPDATE SKIP LOCKED` on the partial index of
 * pending steps, while the plan row is held in `share` mode so concurrent pulls
 * do not queue behind each other but do wait for a status change in progress.
 *
 * The common case, an executing plan with a pending step, is one statement and
 * so one round trip (see `claimFromExecutingPlan`). A completed or failed plan
 * is answered without a lock; every other case (a plan to start or resume, one
 * awaiting review, no pending step) takes the transaction below.
 */
import { and, asc, desc, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { z } from "zod";
import type { Executor, Transaction } from "../db/client";
import { selectRows } from "../db/rows";
import { planSteps, reviewRequests, skillExecutions } from "../db/schema";
import type { PlanStatus, StepType } from "../plan-engine/states";
import { isTerminalPlanStatus, transitionPlan, transitionStep } from "../plan-engine/transitions";
import { stepStartedAuditInsert, writeAuditLog } from "./audit";
import type { ServiceContext } from "./context";
import { planIdField } from "./fields";
import { lockPlan, type PlanRow, planNotFound, setPlanStatus } from "./plan-access";
import { parseInput } from "./validation";

export const getNextStepInput = z.object({ planId: planIdField });

export type NextStep =
  | {
      status: "ready";
      planId: string;
      planStatus: "executing";
      step: { stepId: string; stepOrder: number; stepType: StepType; instructions: string };
      totalSteps: number;
      hint: string;
    }
  | {
      status: "plan_complete";
      planId: string;
      outputMediaType: string | null;
      outputFormattingInstructions: string | null;
      planFormattingNotes: string | null;
      stepFormattingNotes: { stepId: string; stepOrder: number; notes: string }[];
      hint: string;
    }
  | { status: "plan_failed"; planId: string; hint: string }
  | {
      status: "awaiting_review";
      planId: string;
      review: { reviewRequestId: string; stepId: string; summary: string } | null;
      hint: string;
    }
  | {
      status: "no_pending_steps";
      planId: string;
      planStatus: PlanStatus;
      inProgressCount: number;
      failedCount: number;
      hint: string;
    };

export async function getNextStep(
  ctx: ServiceContext,
  raw: z.input<typeof getNextStepInput>,
): Promise<NextStep> {
  const { planId } = parseInput(getNextStepInput, raw);
  let fast = await claimFromExecutingPlan(ctx, planId);
  // Stale only because a status change committed while the claim waited for
  // the lock: a new statement sees it. Where such changes keep coming (many
  // agents submitting to one plan) the transaction below takes over.
  for (let retry = 0; retry < STALE_RETRIES && fast.status === "stale"; retry += 1) {
    fast = await claimFromExecutingPlan(ctx, planId);
  }
  if (fast.status === "ready") return fast;
  // A completed or failed plan never changes again, so its answer needs no lock.
  if (isTerminalPlanStatus(fast.plan.status)) {
    return terminalPlanAnswer(ctx.db, ctx, fast.plan);
  }
  // A plan that must change status (planning/stalled -> executing) is locked
  // exclusively; an executing plan only in share mode, so pulls run side by side.
  const mode =
    fast.plan.status === "planning" || fast.plan.status === "stalled" ? "update" : "share";
  const outcome = await ctx.db.transaction(async (tx) => {
    const plan = await lockPlan(tx, ctx, planId, mode);
    const settled = await settledPlanAnswer(tx, ctx, plan);
    if (settled) return settled;
    if (mode === "share" && plan.status !== "executing") return "retry" as const;
    return claimStep(tx, ctx, plan);
  });
  if (outcome !== "retry") return outcome;
  // The plan stalled between the peek and the lock: claim again, exclusively.
  return ctx.db.transaction(async (tx) => {
    const plan = await lockPlan(tx, ctx, planId, "update");
    return (await settledPlanAnswer(tx, ctx, plan)) ?? claimStep(tx, ctx, plan);
  });
}

type ReadyStep = Extract<NextStep, { status: "ready" }>;

const STALE_RETRIES = 3;

type ClaimRow = {
  planStatus: PlanStatus;
  planFormattingNotes: string | null;
  stepId: string | null;
  stepOrder: number | null;
  stepType: StepType | null;
  instructions: string | null;
  totalSteps: number;
  current: boolean;
};

/**
 * The loop's hot path in one statement, so one round trip and no BEGIN/COMMIT:
 * lock the plan row in share mode (the plan first, as everywhere), claim its
 * first pending step if the plan is `executing`, write the step_started audit
 * row, and count the plan's steps. The statement is atomic on its own, so the
 * claim and its audit row commit together. A plan in any other status claims
 * nothing here and only reports its status, for the transaction to handle.
 *
 * A statement reads the steps as of its start. If a call that changes the plan
 * (submit, review, modify: they all lock it exclusively and update its row)
 * committed while this one waited for the lock, the locked plan row is newer
 * than the one the statement's snapshot holds; then it claims nothing either
 * and answers `stale` (with the plan as locked, which is current).
 */
async function claimFromExecutingPlan(
  ctx: ServiceContext,
  planId: string,
): Promise<ReadyStep | { status: "stale" | "not_claimed"; plan: SettlingPlan }> {
  const now = new Date().toISOString();
  const [row] = await selectRows<ClaimRow>(
    ctx.db,
    sql`
    with plan as materialized (
      select id, status, output_formatting_notes, xmin as version from research_plan
      where id = ${planId}::uuid and tenant_id = ${ctx.tenantId}::uuid
      for share
    ), fresh as materialized (
      select plan.version = (select xmin from research_plan where id = ${planId}::uuid) as current
      from plan
    ), next as (
      select id from plan_step
      where plan_id = (
          select id from plan where status = 'executing' and (select current from fresh)
        )
        and tenant_id = ${ctx.tenantId}::uuid and status = 'pending'
      order by step_order
      limit 1
      for update skip locked
    ), claimed as (
      update plan_step
      set status = ${transitionStep("pending", "in_progress")}::step_status,
        started_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
      where id = (select id from next)
      returning id, step_order, step_type, instructions
    ), audit as (
      ${stepStartedAuditInsert(ctx, planId, "executing", sql`claimed`)}
    )
    select plan.status as "planStatus", plan.output_formatting_notes as "planFormattingNotes",
      claimed.id as "stepId", claimed.step_order as "stepOrder",
      claimed.step_type as "stepType", claimed.instructions,
      (select count(*)::int from plan_step where plan_id = plan.id) as "totalSteps",
      fresh.current
    from plan cross join fresh left join claimed on true`,
  );
  if (!row) throw planNotFound(planId);
  // The locked plan row is the newest one, stale snapshot or not.
  const plan = {
    id: planId,
    status: row.planStatus,
    outputFormattingNotes: row.planFormattingNotes,
  };
  if (!row.current) return { status: "stale", plan };
  if (row.stepId === null || row.stepOrder === null || row.stepType === null) {
    return { status: "not_claimed", plan };
  }
  return readyAnswer(
    planId,
    {
      id: row.stepId,
      stepOrder: row.stepOrder,
      stepType: row.stepType,
      instructions: row.instructions ?? "",
    },
    row.totalSteps,
  );
}

type SettlingPlan = Pick<PlanRow, "id" | "status" | "outputFormattingNotes">;

/** The answer for a completed or failed plan. */
async function terminalPlanAnswer(
  db: Executor,
  ctx: ServiceContext,
  plan: SettlingPlan,
): Promise<NextStep> {
  if (plan.status === "completed") return planComplete(db, ctx, plan);
  return {
    status: "plan_failed",
    planId: plan.id,
    hint: "The plan failed (a branching condition or a user's reject). Call get_research_context to see why and present what was gathered.",
  };
}

/** The answer for a plan that hands out no step: completed, failed or awaiting review. */
async function settledPlanAnswer(
  tx: Transaction,
  ctx: ServiceContext,
  plan: SettlingPlan,
): Promise<NextStep | undefined> {
  if (isTerminalPlanStatus(plan.status)) return terminalPlanAnswer(tx, ctx, plan);
  if (plan.status === "awaiting_review") {
    const [review] = await tx
      .select()
      .from(reviewRequests)
      .where(and(eq(reviewRequests.planId, plan.id), eq(reviewRequests.status, "pending")))
      .orderBy(desc(reviewRequests.createdAt))
      .limit(1);
    return {
      status: "awaiting_review",
      planId: plan.id,
      review: review
        ? { reviewRequestId: review.id, stepId: review.stepId, summary: review.summary }
        : null,
      hint: "A person must answer the checkpoint in Cairn first. Stop here and resume later with get_research_context and get_next_step.",
    };
  }
  return undefined;
}

async function planComplete(
  tx: Executor,
  ctx: ServiceContext,
  plan: SettlingPlan,
): Promise<NextStep> {
  const [[execution], notes] = await Promise.all([
    tx
      .select({ metadata: skillExecutions.metadata })
      .from(skillExecutions)
      .where(and(eq(skillExecutions.planId, plan.id), eq(skillExecutions.tenantId, ctx.tenantId)))
      .orderBy(desc(skillExecutions.createdAt))
      .limit(1),
    tx
      .select({
        stepId: planSteps.id,
        stepOrder: planSteps.stepOrder,
        notes: planSteps.outputFormattingNotes,
      })
      .from(planSteps)
      .where(
        and(
          eq(planSteps.planId, plan.id),
          eq(planSteps.status, "completed"),
          isNotNull(planSteps.outputFormattingNotes),
        ),
      )
      .orderBy(asc(planSteps.stepOrder)),
  ]);
  const text = (value: unknown) => (typeof value === "string" ? value : null);
  return {
    status: "plan_complete",
    planId: plan.id,
    outputMediaType: text(execution?.metadata.outputMediaType),
    outputFormattingInstructions: text(execution?.metadata.outputFormattingInstructions),
    planFormattingNotes: plan.outputFormattingNotes,
    stepFormattingNotes: notes.map((note) => ({ ...note, notes: note.notes ?? "" })),
    hint: "Every step is done. Call get_research_context for all results, write the deliverable in the requested format, and store it.",
  };
}

async function claimStep(tx: Transaction, ctx: ServiceContext, plan: PlanRow): Promise<NextStep> {
  const now = new Date();
  const next = tx
    .select({ id: planSteps.id })
    .from(planSteps)
    .where(
      and(
        eq(planSteps.planId, plan.id),
        eq(planSteps.tenantId, ctx.tenantId),
        eq(planSteps.status, "pending"),
      ),
    )
    .orderBy(asc(planSteps.stepOrder))
    .limit(1)
    .for("update", { skipLocked: true });
  const [step] = await tx
    .update(planSteps)
    .set({
      status: transitionStep("pending", "in_progress"),
      startedAt: now,
      updatedAt: now,
    })
    .where(inArray(planSteps.id, next))
    .returning();

  if (!step) {
    const [counts] = await tx
      .select({
        inProgress: sql<number>`count(*) filter (where ${planSteps.status} = 'in_progress')::int`,
        failed: sql<number>`count(*) filter (where ${planSteps.status} = 'failed')::int`,
        total: sql<number>`count(*)::int`,
      })
      .from(planSteps)
      .where(eq(planSteps.planId, plan.id));
    return {
      status: "no_pending_steps",
      planId: plan.id,
      planStatus: plan.status,
      inProgressCount: counts?.inProgress ?? 0,
      failedCount: counts?.failed ?? 0,
      hint: "No step is waiting. Finish the steps in progress with submit_step_result; a failed step can be retried with modify_plan (action retry_step).",
    };
  }

  if (plan.status !== "executing") {
    await setPlanStatus(tx, plan, transitionPlan(plan.status, "executing"), now);
  }
  await writeAuditLog(tx, ctx, {
    eventType: "step_started",
    planId: plan.id,
    stepId: step.id,
    payload: { stepOrder: step.stepOrder, planStatusBefore: plan.status },
  });
  const [total] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(planSteps)
    .where(eq(planSteps.planId, plan.id));
  return readyAnswer(plan.id, step, total?.n ?? 0);
}

function readyAnswer(
  planId: string,
  step: { id: string; stepOrder: number; stepType: StepType; instructions: string },
  totalSteps: number,
): ReadyStep {
  return {
    status: "ready",
    planId,
    planStatus: "executing",
    step: {
      stepId: step.id,
      stepOrder: step.stepOrder,
      stepType: step.stepType,
      instructions: step.instructions,
    },
    totalSteps,
    hint:
      step.stepOrder > 1
        ? "Call get_step_context for earlier results if you need them, do the work, then call submit_step_result with this stepId."
        : "Do the work, then call submit_step_result with this stepId.",
  };
}
