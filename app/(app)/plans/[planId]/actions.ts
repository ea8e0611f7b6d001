"use server";

import { redirect } from "next/navigation";
import { z } from "zod";
import { decisionMessage } from "@/app/_components/review/decision-message";
import { AppError } from "@/lib/plan-engine/app-error";
import { cancelPlan, cancelPlanInput } from "@/lib/services/plans/cancel-plan";
import { forkPlan } from "@/lib/services/plans/fork-plan";
import {
  submitUserDecision,
  submitUserDecisionFields,
  withDecisionRules,
} from "@/lib/services/plans/submit-user-decision";
import { assignReview, assignReviewInput } from "@/lib/services/reviews/assign-review";
import {
  snoozeReview,
  snoozeReviewInput,
  unsnoozeReview,
  unsnoozeReviewInput,
} from "@/lib/services/reviews/snooze-review";
import {
  jsonObjectText,
  MAX_RESULT_BYTES,
  MAX_STEP_IO_BYTES,
  MAX_STEPS,
  planIdField,
  stepIdField,
} from "@/lib/services/shared/fields";
import { serverAction } from "@/lib/web/server-action";

/** The review form's fields: the use case's, with the result the person enters as JSON text. */
const decideReviewForm = withDecisionRules(
  submitUserDecisionFields.extend({ result: jsonObjectText(MAX_RESULT_BYTES).optional() }),
);

/** The review buttons: the same use case, with the same effect and audit rows, as submit_user_decision over MCP. */
export const decideReviewAction = serverAction({
  access: "signed-in",
  input: decideReviewForm,
  run: ({ ctx, input }) => submitUserDecision(ctx, input),
  success: (result) => decisionMessage(result),
  // The inbox answers with the same form, and lists the review too.
  revalidate: (input) => [`/plans/${input.planId}`, "/inbox"],
  revalidateAfterFailure: true,
});

/**
 * The review panel's assignment form: "Assign to me" (`take=me`), or the
 * select's `handTo` (a team member's user id, or "team" to hand it back).
 */
const assignReviewForm = z.object({
  planId: planIdField,
  reviewRequestId: assignReviewInput.shape.reviewRequestId,
  take: z.literal("me").optional(),
  handTo: z.union([z.literal("team"), z.uuid("must be a user id (a UUID)")]).optional(),
  note: assignReviewInput.shape.note,
});

/** Take a review, or hand it to a colleague (with a note; they are notified) or back to the team. */
export const assignReviewAction = serverAction({
  access: "signed-in",
  input: assignReviewForm,
  formOnly: ["handoff"],
  refuse: (form) =>
    form.get("take") !== "me" && !form.get("handTo")
      ? "Choose who should answer the review."
      : undefined,
  run: ({ ctx, user, input }) =>
    assignReview(ctx, {
      reviewRequestId: input.reviewRequestId,
      userId:
        input.take === "me" ? user.userId : input.handTo === "team" ? null : (input.handTo ?? null),
      ...(input.take === "me" ? {} : { note: input.note }),
    }),
  success: (assigned, _, user) =>
    assigned.assignedUserId === null
      ? "Handed back to the team: anyone may answer it."
      : assigned.assignedUserId === user.userId
        ? "Assigned to you."
        : `Handed over to ${assigned.assignedUserEmail}, who has been notified.`,
  revalidate: (input) => [`/plans/${input.planId}`, "/inbox"],
  revalidateAfterFailure: true,
});

/** The Snooze control of the inbox and the review panel: out of the user's own inbox until a time. */
export const snoozeReviewAction = serverAction({
  access: "signed-in",
  input: snoozeReviewInput.extend({ planId: planIdField }),
  run: ({ ctx, input }) =>
    snoozeReview(ctx, {
      reviewRequestId: input.reviewRequestId,
      until: input.until,
      at: input.at,
      timeZone: input.timeZone,
    }),
  success: (snoozed) =>
    `Snoozed until ${snoozed.until.slice(0, 16).replace("T", " ")} UTC: it leaves your inbox until then, and your colleagues still see it.`,
  revalidate: (input) => [`/plans/${input.planId}`, "/inbox"],
  revalidateAfterFailure: true,
});

/** Un-snooze: the review is back in the user's inbox now. */
export const unsnoozeReviewAction = serverAction({
  access: "signed-in",
  input: unsnoozeReviewInput.extend({ planId: planIdField }),
  run: ({ ctx, input }) => unsnoozeReview(ctx, { reviewRequestId: input.reviewRequestId }),
  success: () => "Back in your inbox.",
  revalidate: (input) => [`/plans/${input.planId}`, "/inbox"],
  revalidateAfterFailure: true,
});

/**
 * The Cancel button of the plan page, the plan list and the Stalled page: the
 * same use case as cancel_plan over MCP, with the person's reason.
 */
export const cancelPlanAction = serverAction({
  access: "signed-in",
  input: cancelPlanInput,
  run: ({ ctx, input }) => cancelPlan(ctx, input),
  success: (result) =>
    `Cancelled${result.withdrawnReviewIds.length > 0 ? ", and its open review withdrawn" : ""}.`,
  revalidate: (input) => [`/plans/${input.planId}`, "/plans", "/admin/stalled", "/inbox"],
  revalidateAfterFailure: true,
});

/**
 * The "Fork from here" form: every step it shows sends its id, its
 * instructions and (a server-run step) its arguments as JSON text, in order;
 * fork_plan keeps what is unchanged as it was.
 */
const forkPlanForm = z.object({
  planId: planIdField,
  fromStepId: stepIdField,
  name: z.string().trim().max(300).optional(),
  stepId: z.array(stepIdField).max(MAX_STEPS),
  instructions: z.array(z.string()).max(MAX_STEPS),
  arguments: z.array(z.string().max(MAX_STEP_IO_BYTES)).max(MAX_STEPS),
});

/** The form's lists as fork_plan's stepEdits; arguments that are not a JSON object are refused with the step's place. */
function stepEditsOf(input: z.output<typeof forkPlanForm>) {
  return input.stepId.map((stepId, index) => {
    const text = input.arguments[index]?.trim() ?? "";
    let args: Record<string, unknown> | undefined;
    if (text !== "") {
      const parsed = jsonObjectText(MAX_STEP_IO_BYTES).safeParse(text);
      if (!parsed.success) {
        throw new AppError(
          "VALIDATION_ERROR",
          `The arguments of the form's step ${index + 1} are not a JSON object: enter one such as {"query": "heat pumps"}.`,
          { field: "arguments" },
        );
      }
      args = parsed.data;
    }
    return { stepId, instructions: input.instructions[index], arguments: args };
  });
}

/** Fork the plan from a step with the person's edits: the same use case as fork_plan over MCP; then the fork's page. */
export const forkPlanAction = serverAction({
  access: "signed-in",
  input: forkPlanForm,
  run: ({ ctx, input }) =>
    forkPlan(ctx, {
      planId: input.planId,
      fromStepId: input.fromStepId,
      stepEdits: stepEditsOf(input),
      ...(input.name ? { name: input.name } : {}),
    }),
  success: (fork) => redirect(`/plans/${fork.planId}`),
  revalidate: (input) => [`/plans/${input.planId}`, "/plans"],
});
