/**
 * get_next_step's answers other than the hand-out's own path, each built from
 * the plan's rows: a plan that ended, one awaiting review, one held by a fired
 * add_steps, one with no step to hand out, and the ready answer of a claimed
 * step with the hint on how to finish it.
 */
import "server-only";
import { and, desc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Executor, Transaction } from "../../db/client";
import { planSteps, reviewRequests } from "../../db/schema";
import { run, sqlLiterals, statement } from "../../db/statement";
import { cancelledPlanMessage } from "../../plan-engine/cancel";
import { UNDECIDED_CHECKPOINT_STATUSES } from "../../plan-engine/checkpoint-guard";
import { metadataText } from "../../plan-engine/skill-executions";
import { isTerminalPlanStatus } from "../../plan-engine/transitions";
import {
  type ClaimedStep,
  COMPLETED_PLAN_READ,
  type CompletedPlanRead,
  completedPlanRead,
} from "../loop/claim-next-step";
import { approvalsShown } from "../reviews/approvals";
import type { ServiceContext } from "../shared/context";
import { getPlan, type PlanRow } from "../shared/plan-access";
import type { NextStep, ReadyStep } from "./next-step-output";
import type { ServerStepRun } from "./run-server-steps";

/** The plan fields an answer other than a hand-out is built from. */
export type PlanForAnswer = Pick<PlanRow, "id" | "status" | "outputFormattingNotes">;

/**
 * The answer for a completed, failed or cancelled plan; a completed plan's
 * from `completed` when the caller's statement read it already.
 */
export async function terminalPlanAnswer(
  db: Executor,
  ctx: ServiceContext,
  plan: PlanForAnswer,
  completed: CompletedPlanRead | null = null,
): Promise<NextStep> {
  if (plan.status === "completed") return planComplete(db, ctx, plan, completed);
  if (plan.status === "cancelled") {
    const { cancellation } = await getPlan(db, ctx, plan.id);
    return {
      status: "plan_cancelled",
      planId: plan.id,
      cancellation: cancellation ?? { by: "unknown", reason: "not recorded", at: "" },
      hint: `${cancelledPlanMessage(plan.id, cancellation)} No step is handed out or accepted any more; tell the user, and present what was gathered (get_research_context) if that helps.`,
    };
  }
  return {
    status: "plan_failed",
    planId: plan.id,
    hint: "The plan failed (a branching condition or a user's reject). Call get_research_context to see why and present what was gathered.",
  };
}

/** The answer for a plan that hands out no step: completed, failed or awaiting review. */
export async function settledPlanAnswer(
  tx: Transaction,
  ctx: ServiceContext,
  plan: PlanForAnswer & Pick<PlanRow, "pauseReason">,
): Promise<NextStep | undefined> {
  if (isTerminalPlanStatus(plan.status)) return terminalPlanAnswer(tx, ctx, plan);
  if (plan.status === "awaiting_review") {
    const [review] = await tx
      .select()
      .from(reviewRequests)
      .where(and(eq(reviewRequests.planId, plan.id), eq(reviewRequests.status, "pending")))
      .orderBy(desc(reviewRequests.createdAt))
      .limit(1);
    const approvals = review
      ? (await approvalsShown(tx, ctx.tenantId, [review.id])).get(review.id)
      : undefined;
    return {
      status: "awaiting_review",
      planId: plan.id,
      review: review
        ? {
            reviewRequestId: review.id,
            stepId: review.stepId,
            summary: review.summary,
            ...(review.proposedResult ? { proposedResult: review.proposedResult } : {}),
            ...(review.proposedConfidence !== null
              ? { proposedConfidence: review.proposedConfidence }
              : {}),
            contentDigest: review.contentDigest,
            ...(review.dueAt ? { dueAt: review.dueAt.toISOString() } : {}),
            ...(review.onTimeout ? { onTimeout: review.onTimeout } : {}),
            ...(review.escalatedAt ? { escalatedAt: review.escalatedAt.toISOString() } : {}),
            ...(approvals ? { approvals } : {}),
          }
        : null,
      // Every reason the plan waits is named: a pause too, with its own call.
      ...(plan.pauseReason ? { pauseReason: plan.pauseReason } : {}),
      hint:
        "A person must answer the checkpoint in Cairn first. Stop here and resume later with get_research_context and get_next_step." +
        (plan.pauseReason
          ? ` The plan is also paused: ${plan.pauseReason.message} Once the review is decided, answer the pause with pauseReason.suggestedTool.`
          : ""),
    };
  }
  return undefined;
}

/** A completed plan's read on its own, where no claim read it (`COMPLETED_PLAN_READ`). */
const completedPlanStatement = statement(
  "read a completed plan's answer",
  `select ${COMPLETED_PLAN_READ} as read`,
  z.object({ read: completedPlanRead }),
);

async function planComplete(
  db: Executor,
  ctx: ServiceContext,
  plan: PlanForAnswer,
  known: CompletedPlanRead | null,
): Promise<NextStep> {
  const read = known ?? (await run(db, completedPlanStatement, [plan.id, ctx.tenantId]))[0]?.read;
  const failed = read?.failed ?? [];
  // A plan that ended with a failed step is said so, with the way to re-open it.
  const failedNote =
    failed.length > 0
      ? ` Step ${failed.join(", ")} failed; modify_plan retry_step on it re-opens the plan if that work should still be done.`
      : "";
  return {
    status: "plan_complete",
    planId: plan.id,
    outputMediaType: metadataText(read?.metadata, "outputMediaType"),
    outputFormattingInstructions: metadataText(read?.metadata, "outputFormattingInstructions"),
    planFormattingNotes: plan.outputFormattingNotes,
    stepFormattingNotes: read?.notes ?? [],
    hint: `Every step is done.${failedNote} Call get_research_context for all results, write the deliverable in the requested format, and store it with store_research_output (it checks the citations against the plan's sources); then present it to the user and record their reaction with submit_research_feedback.`,
  };
}

/** The answer while a fired add_steps holds the plan: why, and the two calls that answer it. */
export function awaitingStepsAnswer(
  plan: Pick<PlanRow, "id" | "status">,
  awaiting: NonNullable<PlanRow["awaitingSteps"]>,
  serverSteps: ServerStepRun[] | undefined,
): NextStep {
  return {
    status: "awaiting_steps",
    planId: plan.id,
    planStatus: plan.status,
    serverSteps,
    condition: awaiting,
    hint: `Step ${awaiting.stepOrder}'s condition "${awaiting.conditionExpression}" asks for more steps, and no further step is handed out until you answer it: call modify_plan({ planId: "${plan.id}", action: "add_steps", insertAfterOrder: ${awaiting.stepOrder}, steps: [...], modificationRationale }) (see condition.params), or modify_plan with action "decline_add_steps" if none are needed.`,
  };
}

export async function noPendingSteps(
  tx: Transaction,
  plan: Pick<PlanRow, "id" | "status">,
): Promise<Extract<NextStep, { status: "no_pending_steps" }>> {
  const [counts] = await tx
    .select({
      inProgress: sql<number>`count(*) filter (where ${planSteps.status} = 'in_progress')::int`,
      checkpointInProgress: sql<
        number | null
      >`min(${planSteps.stepOrder}) filter (where ${planSteps.status} = 'in_progress' and ${planSteps.stepType} = 'checkpoint')`,
      inProgressCheckpoints: sql<number>`count(*) filter (where ${planSteps.status} = 'in_progress' and ${planSteps.stepType} = 'checkpoint')::int`,
      failed: sql<number>`count(*) filter (where ${planSteps.status} = 'failed')::int`,
      nextLease: sql<
        string | null
      >`min(${planSteps.leaseExpiresAt}) filter (where ${planSteps.status} = 'in_progress')`,
      heldAt: sql<
        number | null
      >`min(${planSteps.stepOrder}) filter (where ${planSteps.stepType} = 'checkpoint' and ${planSteps.status}::text in (${sql.raw(sqlLiterals(UNDECIDED_CHECKPOINT_STATUSES))}))`,
      lastPending: sql<
        number | null
      >`max(${planSteps.stepOrder}) filter (where ${planSteps.status} = 'pending')`,
    })
    .from(planSteps)
    .where(eq(planSteps.planId, plan.id));
  const nextLease = counts?.nextLease ? new Date(counts.nextLease).toISOString() : null;
  return {
    status: "no_pending_steps",
    planId: plan.id,
    planStatus: plan.status,
    inProgressCount: counts?.inProgress ?? 0,
    failedCount: counts?.failed ?? 0,
    nextLeaseExpiresAt: nextLease,
    hint:
      `No step is waiting. ${finishInProgressHint(counts)} A failed step can be retried with modify_plan (action retry_step).` +
      (nextLease
        ? ` A step in progress whose lease runs out (first at ${nextLease}) is handed out again by get_next_step.`
        : "") +
      // Named only when it holds a step back.
      (counts?.heldAt != null && (counts.lastPending ?? 0) > counts.heldAt
        ? ` Step ${counts.heldAt} is a checkpoint nobody has decided yet: the steps after it are handed out once a person has decided it (the agent holding it puts it up with request_user_review).`
        : ""),
  };
}

export function readyAnswer(planId: string, row: ClaimedStep): ReadyStep | undefined {
  if (row.stepId === null || row.stepOrder === null || row.stepType === null) return undefined;
  const attempt = row.attempt ?? 1;
  return {
    status: "ready",
    planId,
    planStatus: "executing",
    step: {
      stepId: row.stepId,
      stepOrder: row.stepOrder,
      stepType: row.stepType,
      instructions: row.instructions ?? "",
      attempt,
      leaseExpiresAt: new Date(row.leaseExpiresAt ?? Date.now()).toISOString(),
    },
    totalSteps: row.totalSteps,
    hint:
      (attempt > 1
        ? "This step was handed out before and nobody finished it (or a reviewer asked for a redo: see the User feedback in its instructions). "
        : "") +
      (row.stepOrder > 1
        ? "Call get_step_context for earlier results if you need them, do the work, then "
        : "Do the work, then ") +
      finishStepHint(row.stepType),
  };
}

/**
 * How the steps in progress end: a checkpoint only with a review (a result for
 * one is refused where only people decide), the others with a result.
 */
function finishInProgressHint(
  counts:
    | { inProgress: number; inProgressCheckpoints: number; checkpointInProgress: number | null }
    | undefined,
): string {
  const checkpoints = counts?.inProgressCheckpoints ?? 0;
  if (checkpoints === 0) return "Finish the steps in progress with submit_step_result.";
  const review = `the agent holding it puts it up with request_user_review (a proposedResult is optional), and a person decides it`;
  if (checkpoints === counts?.inProgress) {
    return checkpoints === 1
      ? `Step ${counts.checkpointInProgress} in progress is a checkpoint: ${review}.`
      : `The steps in progress are checkpoints: for each, ${review}.`;
  }
  return `Finish the steps in progress: a checkpoint (the first is step ${counts?.checkpointInProgress}) with request_user_review (a proposedResult is optional), the others with submit_step_result.`;
}

/**
 * How the agent finishes the step handed out: a checkpoint is a pause for a
 * person, so it ends with a review (where only people decide, a result alone
 * is refused: docs/reviews.md).
 */
function finishStepHint(stepType: string): string {
  return stepType === "checkpoint"
    ? "call request_user_review with this stepId, what you found as summary and the result you ask the person to accept as proposedResult, if you have one that meets the step's outputSchema (left out, the person enters the result when they approve): a person's decision completes the step. Request it before the lease runs out."
    : "call submit_step_result with this stepId before the lease runs out.";
}
