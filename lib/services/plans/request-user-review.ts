/**
 * request_user_review (docs/execution-loop.md): the step in
 * progress waits for a person (`awaiting_input`) and the plan pauses
 * (`awaiting_review`) until submit_user_decision. A stalled plan whose agent is
 * still at work resumes first, since the agent has evidently come back.
 *
 * A review may carry a deadline and the action Cairn takes itself when it
 * passes (or get the team's default), and may be assigned to a person or a
 * role (docs/reviews.md). The `review.requested` notification is queued in the
 * same transaction.
 */
import "server-only";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { planSteps, reviewRequests, tenants, USER_ROLES, users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { checkTimeoutAction } from "../../plan-engine/decisions";
import {
  MAX_DEADLINE_SECONDS,
  nextEscalation,
  resolveDeadline,
  TIMEOUT_ACTIONS,
} from "../../plan-engine/review-deadlines";
import { decideReviewRequest } from "../../plan-engine/review-request";
import { DECISION_POLICIES, DEFAULT_DECISION_POLICY } from "../../plan-engine/states";
import { transitionStep } from "../../plan-engine/transitions";
import { queueEvent } from "../notifications/events";
import { reviewContentDigestSql } from "../reviews/review-digest";
import { checkReviewCount } from "../reviews/review-limits";
import { approvalsRequiredField, approvalsRequiredOf } from "../reviews/review-quorum";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { optionalResultField, planIdField, stepIdField } from "../shared/fields";
import { checkOutputSchema } from "../shared/output-schema";
import {
  loadCheckpoints,
  lockPlan,
  lockStep,
  setPlanStatusAndQueueEvent,
} from "../shared/plan-access";
import { reviewPageUrl } from "../shared/public-url";
import { parseInput } from "../shared/validation";

export const assignToField = z
  .union([
    z.email("must be a team member's e-mail address"),
    z.object({ role: z.enum(USER_ROLES) }).strict(),
  ])
  .describe(
    'A member\'s e-mail or {"role": "admin"}; left out, the whole team. Anyone may still answer.',
  );

export const requestUserReviewInput = z.object({
  planId: planIdField,
  stepId: stepIdField,
  summary: z
    .string()
    .trim()
    .min(1)
    .max(20_000)
    .describe("What you found and what the person should decide, in plain words."),
  questions: z.array(z.string().trim().min(1).max(2_000)).max(10).optional(),
  deadlineSeconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_DEADLINE_SECONDS)
    .optional()
    .describe("Seconds to answer; left out, the team's default or none."),
  deadlineAt: z.iso
    .datetime({ offset: true, message: "must be an ISO 8601 time, e.g. 2026-05-01T12:00:00Z" })
    .optional(),
  onTimeout: z
    .enum(TIMEOUT_ACTIONS)
    .optional()
    .describe(
      "At the deadline: Cairn approves, rejects or skips itself, or escalates to the admins; not approve or skip under people_only.",
    ),
  assignTo: assignToField.optional(),
  proposedResult: optionalResultField(
    "What an approve completes the step with (conditions read it); left out where you cannot meet a checkpoint's outputSchema: the person enters it.",
  ),
  proposedConfidence: z.number().min(0).max(1).optional().describe("Conditions see it on approve."),
  approvalsRequired: approvalsRequiredField.optional(),
});

/** The answer: the pending review, its deadline and assignee (the MCP tool's output schema). */
export const reviewRequestedOutput = z.object({
  planId: z.string(),
  stepId: z.string(),
  reviewRequestId: z.string(),
  stepStatus: z.literal("awaiting_input"),
  planStatus: z.literal("awaiting_review"),
  // When Cairn acts itself, and how; absent without a deadline.
  dueAt: z.string().optional(),
  onTimeout: z.enum(TIMEOUT_ACTIONS).optional(),
  assignedUserId: z.string().nullable(),
  assignedRole: z.enum(USER_ROLES).nullable(),
  // Distinct people whose approval passes it.
  approvalsRequired: z.number(),
  // Where the person answers, and who the team lets decide.
  reviewUrl: z.string(),
  decisionPolicy: z.enum(DECISION_POLICIES),
  // Pass it with submit_user_decision to bind a relayed decision to what was shown.
  contentDigest: z.string(),
  hint: z.string(),
});

export type ReviewRequested = z.infer<typeof reviewRequestedOutput>;

/** The assignee named by `assignTo`: an unknown or disabled e-mail is a VALIDATION_ERROR. */
async function resolveAssignee(
  tx: Transaction,
  ctx: ServiceContext,
  assignTo: z.output<typeof assignToField> | undefined,
): Promise<{ userId: string | null; role: (typeof USER_ROLES)[number] | null }> {
  if (assignTo === undefined) return { userId: null, role: null };
  if (typeof assignTo !== "string") return { userId: null, role: assignTo.role };
  const [user] = await tx
    .select({ id: users.id })
    .from(users)
    .where(
      and(
        eq(users.tenantId, ctx.tenantId),
        sql`lower(${users.email}) = lower(${assignTo})`,
        sql`${users.disabledAt} is null`,
      ),
    );
  if (!user) {
    throw new AppError(
      "VALIDATION_ERROR",
      `assignTo: nobody in this team signs in as ${assignTo}. Name an active team member's e-mail, a role ({"role": "admin"}), or leave assignTo out to ask the whole team.`,
      { field: "assignTo" },
    );
  }
  return { userId: user.id, role: null };
}

export async function requestUserReview(
  ctx: ServiceContext,
  raw: z.input<typeof requestUserReviewInput>,
): Promise<ReviewRequested> {
  const input = parseInput(requestUserReviewInput, raw);
  return ctx.db.transaction(async (tx) => {
    const plan = await lockPlan(tx, ctx, input.planId);
    const step = await lockStep(tx, ctx, plan.id, input.stepId);
    decideReviewRequest(
      {
        id: plan.id,
        status: plan.status,
        pause: plan.pauseReason
          ? {
              stepOrder: plan.pauseReason.stepOrder,
              suggestedTool: plan.pauseReason.suggestedTool.name,
            }
          : null,
        steps: await loadCheckpoints(tx, ctx, plan.id),
      },
      step,
    );
    // An approve completes the step with the proposal, so it must keep the
    // step's contract: checked now, while the agent can still correct it. A
    // checkpoint may go up with none: a person can always decide it, and
    // enters the result an approve completes it with (docs/reviews.md).
    if (step.outputSchema) {
      const checkpoint = step.stepType === "checkpoint";
      if (input.proposedResult === undefined && !checkpoint) {
        throw new AppError(
          "VALIDATION_ERROR",
          `proposedResult: step ${step.stepOrder} has an outputSchema, so an approve needs a result that satisfies it. Nothing was stored; send the result you ask the person to accept as proposedResult (get_research_context shows the schema).`,
          { field: "proposedResult" },
        );
      }
      if (input.proposedResult !== undefined) {
        checkOutputSchema(
          step.outputSchema,
          input.proposedResult,
          "proposedResult",
          checkpoint
            ? "propose a result that does (get_research_context shows the schema), or leave proposedResult out: the person then enters the result when they approve."
            : "propose a result that does (get_research_context shows the schema).",
        );
      }
    }
    const now = new Date();
    const [team] = await tx
      .select({
        reviewDeadlineSeconds: tenants.reviewDeadlineSeconds,
        reviewOnTimeout: tenants.reviewOnTimeout,
        decisionPolicy: tenants.decisionPolicy,
        approvalsRequired: tenants.reviewApprovalsRequired,
        escalationChain: tenants.reviewEscalationChain,
      })
      .from(tenants)
      .where(eq(tenants.id, ctx.tenantId))
      // Share mode: a change of the team's rules waits for this request, or it for the change.
      .for("share");
    const decisionPolicy = team?.decisionPolicy ?? DEFAULT_DECISION_POLICY;
    // A checkpoint where only people decide has no other way past it than a
    // review, and each of its cycles is a person's decision: no agent can loop
    // on it alone, so it is not bounded.
    if (!(step.stepType === "checkpoint" && decisionPolicy === "people_only")) {
      await checkReviewCount(tx, step);
    }
    checkTimeoutAction(decisionPolicy, ctx.actor.type, {
      onTimeout: input.onTimeout,
      inheritedFromTeam: false,
    });
    const deadline = resolveDeadline(
      {
        deadlineSeconds: input.deadlineSeconds,
        deadlineAt: input.deadlineAt === undefined ? undefined : Date.parse(input.deadlineAt),
        onTimeout: input.onTimeout,
      },
      team ?? { reviewDeadlineSeconds: null, reviewOnTimeout: null },
      now.getTime(),
    );
    // A deadline the caller timed runs the team's action at the caller's time:
    // checked as if the caller had named that action.
    const callerTimed = input.deadlineSeconds !== undefined || input.deadlineAt !== undefined;
    if (deadline && callerTimed && input.onTimeout === undefined) {
      checkTimeoutAction(decisionPolicy, ctx.actor.type, {
        onTimeout: deadline.onTimeout,
        inheritedFromTeam: true,
      });
    }
    const approvalsRequired = approvalsRequiredOf(
      team?.approvalsRequired ?? 1,
      plan.approvalsRequired,
      input.approvalsRequired,
    );
    const assignee = await resolveAssignee(tx, ctx, input.assignTo);
    const dueAt = deadline ? new Date(deadline.dueAt) : null;
    // The review keeps the team's chain as it stands now; its first level is counted from now.
    const escalationChain = team?.escalationChain ?? null;
    const firstLevel = escalationChain
      ? nextEscalation(escalationChain, 0, now.getTime(), now.getTime())
      : null;
    const questions = input.questions ?? [];
    const proposedResult = input.proposedResult ?? null;
    const proposedConfidence = input.proposedConfidence ?? null;
    const [review] = await tx
      .insert(reviewRequests)
      .values({
        tenantId: ctx.tenantId,
        planId: plan.id,
        stepId: step.id,
        summary: input.summary,
        questions,
        proposedResult,
        proposedConfidence,
        stepInstructions: step.instructions,
        contentDigest: reviewContentDigestSql({
          summary: sql`${input.summary}::text`,
          questions: sql`${JSON.stringify(questions)}::jsonb`,
          proposedResult: sql`${proposedResult === null ? null : JSON.stringify(proposedResult)}::jsonb`,
          proposedConfidence: sql`${proposedConfidence}::float8`,
          instructions: sql`${step.instructions}::text`,
        }),
        requestedByType: ctx.actor.type,
        requestedById: ctx.actor.id,
        requestedByLabel: ctx.actor.label,
        createdAt: now,
        dueAt,
        onTimeout: deadline?.onTimeout ?? null,
        deadlineFromTeam: deadline !== null && !callerTimed,
        assignedUserId: assignee.userId,
        assignedRole: assignee.role,
        approvalsRequired,
        escalationChain,
        escalationDueAt: firstLevel ? new Date(firstLevel.dueAt) : null,
      })
      .returning({ id: reviewRequests.id, contentDigest: reviewRequests.contentDigest });
    if (!review) throw new AppError("INTERNAL_ERROR", "The review request was not stored.");
    await tx
      .update(planSteps)
      .set({ status: transitionStep("in_progress", "awaiting_input"), updatedAt: now })
      .where(eq(planSteps.id, step.id));
    await setPlanStatusAndQueueEvent(tx, plan, "awaiting_review", now);
    await writeAuditLog(tx, ctx, {
      eventType: "user_reviewed",
      planId: plan.id,
      stepId: step.id,
      payload: {
        action: "review_requested",
        reviewRequestId: review.id,
        summary: input.summary,
        questions,
        ...(proposedResult ? { proposedResult } : {}),
        ...(proposedConfidence !== null ? { proposedConfidence } : {}),
        contentDigest: review.contentDigest,
        ...(deadline ? { dueAt: dueAt?.toISOString(), onTimeout: deadline.onTimeout } : {}),
        ...(assignee.userId ? { assignedUserId: assignee.userId } : {}),
        ...(assignee.role ? { assignedRole: assignee.role } : {}),
        ...(approvalsRequired > 1 ? { approvalsRequired } : {}),
      },
    });
    await queueEvent(tx, ctx.tenantId, "review.requested", review.id, {});
    return {
      planId: plan.id,
      stepId: step.id,
      reviewRequestId: review.id,
      stepStatus: "awaiting_input",
      planStatus: "awaiting_review",
      ...(deadline && dueAt ? { dueAt: dueAt.toISOString(), onTimeout: deadline.onTimeout } : {}),
      assignedUserId: assignee.userId,
      assignedRole: assignee.role,
      approvalsRequired,
      reviewUrl: reviewPageUrl(plan.id),
      decisionPolicy,
      contentDigest: review.contentDigest,
      hint:
        (decisionPolicy === "people_only"
          ? `Only a person may decide this review: show the user the review page, ${reviewPageUrl(plan.id)}. `
          : `Show the user the review page (${reviewPageUrl(plan.id)}), or ask them and relay their answer with submit_user_decision (reviewRequestId and contentDigest from this answer). `) +
        (deadline
          ? `The plan is paused for a person until ${dueAt?.toISOString()}; if nobody answers by then Cairn will ${deadline.onTimeout === "escalate" ? "hand the review to the admins" : `${deadline.onTimeout} the step itself`}. get_next_step answers awaiting_review until then and tells you what happened after.`
          : "The plan is paused for a person. Tell the user the review is waiting in Cairn; get_next_step answers awaiting_review until they decide."),
    };
  });
}
