/**
 * A person's answer at a checkpoint. The one function behind both the MCP tool
 * `submit_user_decision` and the review buttons of the web UI, so both have the
 * same effect and the same audit rows. The engine (`decideReviewDecision`)
 * decides: an approve completes the step with the result the person saw and
 * evaluates its conditions on exactly that, a modify hands the step back to the
 * agent, a plan that ends withdraws its other reviews.
 *
 * Who may decide is the team's choice (`checkDecider`): an agent relaying its
 * user's answer is refused where only people decide, and told to show them the
 * review page. A decision names its review and may carry the digest of what
 * its reviewer was shown; a review no longer pending, or whose content changed
 * since (modify_plan rewrote the step's instructions), is a CONFLICT that
 * changes nothing.
 *
 * Exactly once: the plan row is locked first, and a decision for a review that is
 * no longer pending (another reviewer or the agent acted first) is a CONFLICT that
 * names the current state, never a second application.
 */
import "server-only";
import { desc, sql } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { reviewRequests } from "../../db/schema";
import { AppError, isAppError } from "../../plan-engine/app-error";
import { approvalQuorum, checkDecisionNotHeld } from "../../plan-engine/checkpoint-guard";
import {
  approvedResult,
  checkDecider,
  checkEnteredResult,
  decisionChannel,
} from "../../plan-engine/decisions";
import {
  decideReviewDecision,
  type ReviewDecisionOutcome,
} from "../../plan-engine/review-decision";
import { DECISION_CHANNELS, REVIEW_DECISIONS, type ReviewDecision } from "../../plan-engine/states";
import { writeReviewDecision } from "../loop/decide-review";
import { conditionsAfter, readPlanSnapshot } from "../loop/read-plan-snapshot";
import { approverOf, keepApproval, readApprovals } from "../reviews/approvals";
import { readDecisionRules } from "../reviews/decision-rules";
import { deciderOf } from "../reviews/in-client-trust";
import { pendingReviewsOf } from "../reviews/pending-review";
import { currentReviewDigest } from "../reviews/review-digest";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { optionalResultField, planIdField, stepIdField } from "../shared/fields";
import {
  approvalsOutput,
  firedConditionsOutput,
  planStatus,
  stepStatus,
} from "../shared/output-fields";
import { checkOutputSchema } from "../shared/output-schema";
import { lockPlan, lockStep } from "../shared/plan-access";
import { checkDefinitionTotal, planDefinitionBytes } from "../shared/plan-definitions";
import { reviewPageUrl } from "../shared/public-url";
import { parseInput } from "../shared/validation";

/** The decision's fields; the web form's schema extends them (its result arrives as JSON text). */
export const submitUserDecisionFields = z.object({
  planId: planIdField,
  decision: z
    .enum(REVIEW_DECISIONS)
    .describe(
      "approve: step done; reject: it and the plan fail; modify: redo it with the feedback; skip: skip it.",
    ),
  feedback: z
    .string()
    .trim()
    .max(20_000)
    .optional()
    .describe("The person's words. Required for modify; kept with any decision."),
  stepId: stepIdField.optional(),
  reviewRequestId: z.uuid(),
  contentDigest: z
    .string()
    .regex(/^[0-9a-f]{64}$/, "must be the 64-character contentDigest of request_user_review")
    .optional()
    .describe("The review's contentDigest as the person saw it; left out, as requested."),
  result: optionalResultField(
    "Approve without proposedResult: the result the person entered (meeting the step's outputSchema).",
  ),
});

/** A modify needs feedback, on the use case's input and on any form that extends it. */
export function withDecisionRules<
  Schema extends z.ZodType<{ decision: string; feedback?: string | undefined }>,
>(schema: Schema) {
  return schema.refine(
    (input) => input.decision !== "modify" || (input.feedback ?? "").length > 0,
    {
      message: "modify needs feedback: say what should change",
      path: ["feedback"],
    },
  );
}

export const submitUserDecisionInput = withDecisionRules(submitUserDecisionFields);

/** The answer: the decision recorded and what it did to the step and the plan (the MCP tool's output schema). */
export const userDecisionOutput = z.object({
  planId: z.string(),
  stepId: z.string(),
  reviewRequestId: z.string(),
  decision: z.enum(REVIEW_DECISIONS),
  stepStatus,
  planStatus,
  instructions: z.string(),
  // Conditions of the approved step that held (an approve evaluates them like a submit).
  firedConditions: firedConditionsOutput,
  // How the decision reached Cairn: web (a person), relayed (an agent), deadline (Cairn).
  channel: z.enum(DECISION_CHANNELS),
  approvals: approvalsOutput.optional(),
  hint: z.string(),
});

export type UserDecisionResult = z.infer<typeof userDecisionOutput>;

function conflict(message: string, metadata: Record<string, unknown>): AppError {
  return new AppError("CONFLICT", message, metadata);
}

type DecisionInput = z.output<typeof submitUserDecisionInput>;

/**
 * The input, parsed. A decision must name its review: when that is all that is
 * wrong, the answer says which review is pending, so the caller can check it
 * is the one the person saw before naming it.
 */
async function parseDecision(ctx: ServiceContext, raw: unknown): Promise<DecisionInput> {
  try {
    return parseInput(submitUserDecisionInput, raw);
  } catch (error) {
    const issues = isAppError(error) ? error.metadata.issues : undefined;
    const onlyTheReview =
      Array.isArray(issues) &&
      issues.every((issue: { path: unknown[] }) => issue.path[0] === "reviewRequestId");
    const planId = typeof raw === "object" && raw !== null && "planId" in raw ? raw.planId : null;
    if (!onlyTheReview || typeof planId !== "string" || "reviewRequestId" in (raw as object)) {
      throw error;
    }
    const [pending] = await ctx.db
      .select({ id: reviewRequests.id })
      .from(reviewRequests)
      .where(pendingReviewsOf(planId, ctx.tenantId));
    throw new AppError(
      "VALIDATION_ERROR",
      `reviewRequestId is required: name the review the person answered. ${
        pending
          ? `The plan's pending review is ${pending.id}; pass it only if that is the review the person saw.`
          : "The plan has no pending review."
      }`,
      { field: "reviewRequestId", ...(pending ? { pendingReviewRequestId: pending.id } : {}) },
    );
  }
}

export async function submitUserDecision(
  ctx: ServiceContext,
  raw: z.input<typeof submitUserDecisionInput>,
): Promise<UserDecisionResult> {
  const input = await parseDecision(ctx, raw);
  const feedback = input.feedback && input.feedback.length > 0 ? input.feedback : null;
  return ctx.db.transaction(async (tx) => {
    const plan = await lockPlan(tx, ctx, input.planId);
    const rules = await readDecisionRules(tx, ctx.tenantId);
    const { decisionPolicy } = rules;
    // An answer given in a client is its person's only on the rules as they
    // stand in this transaction; else it is the credential's relay.
    const decider: ServiceContext = { ...ctx, actor: deciderOf(ctx.actor, rules) };
    checkDecider(decisionPolicy, decider.actor.type, reviewPageUrl(plan.id));
    const [review] = await tx
      .select()
      .from(reviewRequests)
      .where(pendingReviewsOf(plan.id, ctx.tenantId))
      .orderBy(desc(reviewRequests.createdAt))
      .limit(1);
    if (plan.status !== "awaiting_review" || !review) {
      throw conflict(
        `The plan is no longer waiting for a decision: it is ${plan.status}. Someone else (the agent or another reviewer) acted first; nothing was changed. Reload the plan to see its current state.`,
        { planStatus: plan.status },
      );
    }
    if (input.reviewRequestId !== review.id) {
      throw conflict(
        `Review ${input.reviewRequestId} is no longer pending: the plan now waits on review ${review.id}, which the person may not have seen. Nothing was changed. Show them the review page: ${reviewPageUrl(plan.id)}`,
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
    const [snapshot, digest] = await Promise.all([
      readPlanSnapshot(tx, ctx.tenantId, plan.id),
      currentDigest(tx, review.id),
    ]);
    const channel = decisionChannel(decider.actor.type, decider.actor.inClient !== undefined);
    // Cairn at a deadline applies the action set for the review as it stands:
    // refusing it would leave the review pending past its deadline for good.
    const expected =
      channel === "deadline" ? digest : (input.contentDigest ?? review.contentDigest);
    if (digest !== expected) {
      throw conflict(
        input.contentDigest
          ? "What the review shows changed since it was shown to you (the step's instructions were rewritten while it waited). Nothing was changed. Reload the review and decide on what it shows now."
          : `What the review shows changed since it was requested (the step's instructions were rewritten while it waited), so the person's answer may not be about it. Nothing was changed. Show them the review page: ${reviewPageUrl(plan.id)}`,
        { reviewRequestId: review.id, contentDigest: digest },
      );
    }
    const proposal = { result: review.proposedResult, confidence: review.proposedConfidence };
    const enteredResult = input.result ?? null;
    checkEnteredResult(input.decision, proposal, enteredResult);
    // An approve keeps the step's contract: request_user_review checks a
    // proposal against the step's outputSchema (this holds for reviews
    // requested before it did), and a review without one needs the result the
    // person enters.
    if (input.decision === "approve" && step.outputSchema) {
      if (proposal.result === null && enteredResult === null) {
        throw new AppError(
          "VALIDATION_ERROR",
          `result: step ${step.stepOrder} has an outputSchema and this review has no proposed result, so an approve needs the result the step completes with. Nothing was changed; enter a result that satisfies the schema, or modify, skip or reject the review. ${reviewPageUrl(plan.id)}`,
          { field: "result" },
        );
      }
      checkOutputSchema(
        step.outputSchema,
        approvedResult(proposal, review.id, feedback, enteredResult).result,
        proposal.result === null ? "result" : "proposedResult",
        proposal.result === null
          ? "correct the result and approve again, or modify, skip or reject the review."
          : `the step needs a result that satisfies its outputSchema, so this review cannot be approved: modify it (the agent redoes the step with your feedback), skip it or reject it. ${reviewPageUrl(plan.id)}`,
      );
    }
    // Before an approval is counted toward a quorum (decideReviewDecision asks
    // the same for the decision that settles the review).
    checkDecisionNotHeld({ id: plan.id, steps: snapshot.steps }, step, input.decision);
    // A review that needs several people's approval waits for the rest
    // (approvalQuorum, the checkpoint rule's count); one person counts once.
    let approvedBy: string[] | undefined;
    if (input.decision === "approve" && review.approvalsRequired > 1) {
      const approverId = approverOf(decider.actor);
      const approval = {
        approverId: approverId ?? "",
        label: decider.actor.label,
        channel,
        digest,
      };
      const quorum = approvalQuorum(
        { required: review.approvalsRequired, digest, policy: decisionPolicy },
        await readApprovals(tx, review.id),
        approval,
      );
      if (quorum.counts && !quorum.repeat && approverId !== null) {
        await keepApproval(tx, {
          tenantId: ctx.tenantId,
          planId: plan.id,
          reviewRequestId: review.id,
          approverId,
          actor: decider.actor,
          channel,
          digest,
        });
      }
      const approvals = {
        count: quorum.counted.length,
        required: quorum.required,
        approvedBy: quorum.counted.map((a) => a.label),
      };
      if (!quorum.reached) {
        if (quorum.counts && !quorum.repeat) {
          await writeAuditLog(tx, decider, {
            eventType: "user_reviewed",
            planId: plan.id,
            stepId: step.id,
            payload: {
              action: "approval_recorded",
              reviewRequestId: review.id,
              reviewDigest: digest,
              channel,
              decisionPolicy,
              approvals: approvals.count,
              approvalsRequired: approvals.required,
            },
          });
        }
        return {
          planId: plan.id,
          stepId: step.id,
          reviewRequestId: review.id,
          decision: input.decision,
          stepStatus: step.status,
          planStatus: plan.status,
          instructions: step.instructions,
          firedConditions: [],
          channel,
          approvals,
          hint: quorum.repeat
            ? `Your approval already counts (${approvals.count} of ${approvals.required}); nothing was changed. The review waits for ${approvals.required - approvals.count} more person's approval.`
            : `Approval recorded: ${approvals.count} of ${approvals.required}. The review waits for ${approvals.required - approvals.count} more person's approval; get_next_step answers awaiting_review until then.`,
        };
      }
      approvedBy = approvals.approvedBy;
    }
    const decided = decideReviewDecision(
      {
        id: plan.id,
        status: plan.status,
        awaitingSteps: plan.awaitingSteps,
        steps: snapshot.steps,
        pendingReviews: snapshot.pendingReviews,
        // A pause holds: an approve does not complete the plan around a failed server step.
        pausedOnFailedStepId:
          plan.pauseReason?.type === "tool_error" ? plan.pauseReason.stepId : null,
      },
      {
        id: step.id,
        stepOrder: step.stepOrder,
        status: "awaiting_input",
        instructions: step.instructions,
      },
      conditionsAfter(snapshot, step.id),
      {
        reviewRequestId: review.id,
        decision: input.decision,
        feedback,
        proposal,
        enteredResult,
        channel,
        reviewDigest: digest,
        decisionPolicy,
        ...(approvedBy ? { approvedBy } : {}),
      },
    );
    const stepStatus = decided.stepStatus;
    // A modify's feedback is kept in the step's instructions, so it counts
    // toward the plan's definitions like any other writer's.
    const held =
      decided.instructions !== step.instructions
        ? await planDefinitionBytes(tx, ctx, plan.id)
        : null;
    await writeReviewDecision(tx, decider, {
      planId: plan.id,
      stepId: step.id,
      reviewRequestId: review.id,
      decision: input.decision,
      feedback,
      channel,
      digest,
      decisionPolicy,
      decided,
      now: new Date().toISOString(),
    });
    if (held !== null) {
      await checkDefinitionTotal(tx, ctx, plan.id, held, {
        field: "feedback",
        advice:
          "shorten the feedback, or decide without it and have the agent shorten the plan's steps (modify_plan)",
      });
    }
    const { planStatus, instructions } = decided;
    return {
      planId: plan.id,
      stepId: step.id,
      reviewRequestId: review.id,
      decision: input.decision,
      stepStatus,
      planStatus,
      instructions,
      firedConditions: decided.fired,
      channel,
      ...(approvedBy
        ? {
            approvals: {
              count: approvedBy.length,
              required: review.approvalsRequired,
              approvedBy,
            },
          }
        : {}),
      hint: decisionHint(input.decision, decided),
    };
  });
}

/** The digest of what the review shows now (its step's instructions as they are). */
async function currentDigest(tx: Transaction, reviewRequestId: string): Promise<string> {
  const [row] = await selectRows(
    tx,
    z.object({ digest: z.string() }),
    sql`select ${currentReviewDigest} as digest
      from review_request review join plan_step step on step.id = review.step_id
      where review.id = ${reviewRequestId}::uuid`,
  );
  if (!row) throw new AppError("INTERNAL_ERROR", "The review's content could not be read.");
  return row.digest;
}

/** What the agent does next, for the MCP tool's answer. */
function decisionHint(
  decision: ReviewDecision,
  decided: Pick<ReviewDecisionOutcome, "planStatus" | "awaitingSteps">,
): string {
  if (decided.planStatus === "failed") {
    return decision === "reject"
      ? "The reviewer rejected the step, so the plan failed. Present what was gathered and why it stopped."
      : "A branching condition failed the plan. Present what was gathered and where it stopped.";
  }
  if (decision === "modify") {
    return "The step goes back to the agent with the feedback: get_next_step hands it out next.";
  }
  if (decided.awaitingSteps) {
    return "A condition asks for more steps and the plan waits for them: modify_plan add_steps (or decline_add_steps), then get_next_step.";
  }
  if (decided.planStatus === "completed") {
    return "The plan is complete. Call get_next_step for the formatting notes, then deliver the output.";
  }
  return "Call get_next_step for the next step.";
}
