/**
 * request_user_review (docs/execution-loop.md): the step in
 * progress waits for a person (`awaiting_input`) and the plan pauses
 * (`awaiting_review`) until submit_user_decision. A stalled plan whose agent is
 * still at work resumes first, since the agent has evidently come back.
 */
import "server-only";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { planSteps, reviewRequests } from "../db/schema";
import { AppError } from "../plan-engine/app-error";
import { canTransitionPlan, planTransitionPath, transitionStep } from "../plan-engine/transitions";
import { writeAuditLog } from "./audit";
import type { ServiceContext } from "./context";
import { planIdField, stepIdField } from "./fields";
import { lockPlan, lockStep, setPlanStatus } from "./plan-access";
import { parseInput } from "./validation";

export const requestUserReviewInput = z.object({
  planId: planIdField,
  stepId: stepIdField.describe("The step in progress that the person should review."),
  summary: z
    .string()
    .trim()
    .min(1)
    .max(20_000)
    .describe("What you found so far and what you need the person to decide, in plain language."),
  questions: z
    .array(z.string().trim().min(1).max(2_000))
    .max(10)
    .optional()
    .describe("Specific questions for the reviewer (at most 10)."),
});

export type ReviewRequested = {
  planId: string;
  stepId: string;
  reviewRequestId: string;
  stepStatus: "awaiting_input";
  planStatus: "awaiting_review";
  hint: string;
};

export async function requestUserReview(
  ctx: ServiceContext,
  raw: z.input<typeof requestUserReviewInput>,
): Promise<ReviewRequested> {
  const input = parseInput(requestUserReviewInput, raw);
  return ctx.db.transaction(async (tx) => {
    const plan = await lockPlan(tx, ctx, input.planId);
    const planPath =
      plan.status === "stalled" || canTransitionPlan(plan.status, "awaiting_review")
        ? planTransitionPath(plan.status, "awaiting_review")
        : undefined;
    if (!planPath) {
      throw new AppError(
        "INVALID_TRANSITION",
        `Plan ${plan.id} is ${plan.status}; a review can only be requested while it is executing.` +
          (plan.status === "awaiting_review"
            ? " A review is already pending: wait for the person's decision."
            : plan.status === "planning"
              ? " Call get_next_step to start a step first."
              : ""),
        { entity: "plan", from: plan.status, to: "awaiting_review" },
      );
    }
    const step = await lockStep(tx, ctx, plan.id, input.stepId);
    if (step.status !== "in_progress") {
      throw new AppError(
        "INVALID_TRANSITION",
        `Step ${step.stepOrder} is ${step.status}; only the step in progress can be put up for review. ` +
          (step.status === "pending"
            ? "Call get_next_step to start it first."
            : "Request the review for the step you are working on."),
        { entity: "step", from: step.status, to: "awaiting_input" },
      );
    }
    const now = new Date();
    const [review] = await tx
      .insert(reviewRequests)
      .values({
        tenantId: ctx.tenantId,
        planId: plan.id,
        stepId: step.id,
        summary: input.summary,
        questions: input.questions ?? [],
        requestedByType: ctx.actor.type,
        requestedById: ctx.actor.id,
        requestedByLabel: ctx.actor.label,
        createdAt: now,
      })
      .returning({ id: reviewRequests.id });
    if (!review) throw new AppError("INTERNAL_ERROR", "The review request was not stored.");
    await tx
      .update(planSteps)
      .set({ status: transitionStep("in_progress", "awaiting_input"), updatedAt: now })
      .where(eq(planSteps.id, step.id));
    await setPlanStatus(tx, plan, "awaiting_review", now);
    await writeAuditLog(tx, ctx, {
      eventType: "user_reviewed",
      planId: plan.id,
      stepId: step.id,
      payload: {
        action: "review_requested",
        reviewRequestId: review.id,
        summary: input.summary,
        questions: input.questions ?? [],
      },
    });
    return {
      planId: plan.id,
      stepId: step.id,
      reviewRequestId: review.id,
      stepStatus: "awaiting_input",
      planStatus: "awaiting_review",
      hint: "The plan is paused for a person. Tell the user the review is waiting in Cairn; get_next_step answers awaiting_review until they decide.",
    };
  });
}
