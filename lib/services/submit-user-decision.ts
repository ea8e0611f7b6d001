/**
 * A person's answer at a checkpoint (execution-loop.md, "User decisions"). The
 * one function behind both the MCP tool `submit_user_decision` and the review
 * buttons of the web UI, so both have the same effect and the same audit rows.
 *
 * Exactly once: the plan row is locked first, and a decision for a review that is
 * no longer pending (another reviewer or the agent acted first) is a CONFLICT that
 * names the current state, never a second application.
 */
import { and, desc, eq } from "drizzle-orm";
import { z } from "zod";
import { planSteps, reviewDecisions, reviewRequests } from "../db/schema";
import { AppError } from "../plan-engine/app-error";
import {
  appendUserFeedback,
  applyReviewDecision,
  planStatusAfterDecision,
} from "../plan-engine/decisions";
import {
  type PlanStatus,
  REVIEW_DECISIONS,
  type ReviewDecision,
  type StepStatus,
} from "../plan-engine/states";
import { transitionStep } from "../plan-engine/transitions";
import { type AuditEntry, writeAuditLog } from "./audit";
import type { ServiceContext } from "./context";
import { planIdField, stepIdField } from "./fields";
import { loadSteps, lockPlan, lockStep, setPlanStatus } from "./plan-access";
import { parseInput } from "./validation";

export const submitUserDecisionInput = z
  .object({
    planId: planIdField,
    decision: z
      .enum(REVIEW_DECISIONS)
      .describe(
        "approve: the step is done; reject: the step and the whole plan fail; modify: redo the step with the feedback appended to its instructions; skip: skip the step.",
      ),
    feedback: z
      .string()
      .trim()
      .max(20_000)
      .optional()
      .describe("The person's words. Required for modify; kept with any decision."),
    stepId: stepIdField
      .optional()
      .describe("The reviewed step; when given it must match the pending review."),
    reviewRequestId: z
      .uuid()
      .optional()
      .describe(
        "The review being answered; when given, a decision on a review that was already answered is a CONFLICT.",
      ),
  })
  .refine((input) => input.decision !== "modify" || (input.feedback ?? "").length > 0, {
    message: "modify needs feedback: say what should change",
    path: ["feedback"],
  });

export type UserDecisionResult = {
  planId: string;
  stepId: string;
  reviewRequestId: string;
  decision: ReviewDecision;
  stepStatus: StepStatus;
  planStatus: PlanStatus;
  instructions: string;
};

function conflict(message: string, metadata: Record<string, unknown>): AppError {
  return new AppError("CONFLICT", message, metadata);
}

export async function submitUserDecision(
  ctx: ServiceContext,
  raw: z.input<typeof submitUserDecisionInput>,
): Promise<UserDecisionResult> {
  const input = parseInput(submitUserDecisionInput, raw);
  return ctx.db.transaction(async (tx) => {
    const plan = await lockPlan(tx, ctx, input.planId);
    const [review] = await tx
      .select()
      .from(reviewRequests)
      .where(
        and(
          eq(reviewRequests.planId, plan.id),
          eq(reviewRequests.tenantId, ctx.tenantId),
          eq(reviewRequests.status, "pending"),
        ),
      )
      .orderBy(desc(reviewRequests.createdAt))
      .limit(1);
    if (plan.status !== "awaiting_review" || !review) {
      throw conflict(
        `The plan is no longer waiting for a decision: it is ${plan.status}. Someone else (the agent or another reviewer) acted first; nothing was changed. Reload the plan to see its current state.`,
        { planStatus: plan.status },
      );
    }
    if (input.reviewRequestId && input.reviewRequestId !== review.id) {
      throw conflict(
        "That review was already answered; the plan now waits on a newer review. Nothing was changed. Reload the plan to see it.",
        { planStatus: plan.status, pendingReviewRequestId: review.id },
      );
    }
    if (input.stepId && input.stepId !== review.stepId) {
      throw conflict(
        `The pending review is for step ${review.stepId}, not ${input.stepId}. Nothing was changed.`,
        { pendingStepId: review.stepId },
      );
    }
    const step = await lockStep(tx, ctx, plan.id, review.stepId);
    if (step.status !== "awaiting_input") {
      throw conflict(
        `Step ${step.stepOrder} is ${step.status}, no longer awaiting input. Nothing was changed.`,
        { stepStatus: step.status },
      );
    }

    const now = new Date();
    const outcome = applyReviewDecision(input.decision);
    const stepStatus = transitionStep(step.status, outcome.stepStatus);
    const feedback = input.feedback && input.feedback.length > 0 ? input.feedback : null;
    const instructions =
      input.decision === "modify" && feedback
        ? appendUserFeedback(step.instructions, feedback)
        : step.instructions;
    await tx
      .update(planSteps)
      .set({
        status: stepStatus,
        instructions,
        updatedAt: now,
        ...(stepStatus === "in_progress" ? { startedAt: now } : {}),
        ...(stepStatus === "completed" || stepStatus === "skipped" || stepStatus === "failed"
          ? { completedAt: now }
          : {}),
        ...(stepStatus === "failed"
          ? {
              failureReason: feedback
                ? `Rejected by reviewer: ${feedback}`
                : "Rejected by reviewer",
            }
          : {}),
      })
      .where(eq(planSteps.id, step.id));
    await tx
      .update(reviewRequests)
      .set({ status: "decided", decidedAt: now })
      .where(eq(reviewRequests.id, review.id));
    await tx.insert(reviewDecisions).values({
      tenantId: ctx.tenantId,
      reviewRequestId: review.id,
      planId: plan.id,
      stepId: step.id,
      decision: input.decision,
      feedback,
      decidedByType: ctx.actor.type,
      decidedById: ctx.actor.id,
      decidedByLabel: ctx.actor.label,
      createdAt: now,
    });

    const steps = await loadSteps(tx, ctx, plan.id);
    const planStatus = await setPlanStatus(
      tx,
      plan,
      planStatusAfterDecision(
        input.decision,
        steps.map((s) => s.status),
      ),
      now,
    );
    const audit: AuditEntry[] = [
      {
        eventType: "user_reviewed",
        planId: plan.id,
        stepId: step.id,
        payload: {
          action: "decision",
          reviewRequestId: review.id,
          decision: input.decision,
          feedback,
        },
      },
    ];
    if (stepStatus === "failed") {
      audit.push({
        eventType: "step_failed",
        planId: plan.id,
        stepId: step.id,
        payload: {
          stepOrder: step.stepOrder,
          reason: feedback ?? "Rejected by reviewer",
          source: "review_reject",
        },
      });
    }
    await writeAuditLog(tx, ctx, audit);
    return {
      planId: plan.id,
      stepId: step.id,
      reviewRequestId: review.id,
      decision: input.decision,
      stepStatus,
      planStatus,
      instructions,
    };
  });
}
