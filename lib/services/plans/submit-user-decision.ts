/**
 * A person's answer at a checkpoint. The one function behind both the MCP tool
 * `submit_user_decision` and the review buttons of the web UI, so both have the
 * same effect and the same audit rows. The engine (`decideReviewDecision`)
 * decides: an approve evaluates the step's branching conditions as a submit
 * would, a modify hands the step back to the agent, a plan that ends withdraws
 * its other reviews.
 *
 * Exactly once: the plan row is locked first, and a decision for a review that is
 * no longer pending (another reviewer or the agent acted first) is a CONFLICT that
 * names the current state, never a second application.
 */
import "server-only";
import { and, asc, desc, eq, type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { selectRows } from "../../db/rows";
import { planBranchingConditions, reviewRequests } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import {
  decideCommonReviewDecision,
  decideReviewDecision,
  type ReviewDecisionOutcome,
} from "../../plan-engine/loop";
import { type PlanStatus, REVIEW_DECISIONS, type ReviewDecision } from "../../plan-engine/states";
import { isTerminalPlanStatus, isTerminalStepStatus } from "../../plan-engine/transitions";
import { noteNotificationQueued } from "../notifications/queued";
import { auditInsert } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { planIdField, stepIdField } from "../shared/fields";
import { decidedPlanUpdate, loopEffectsSql, planStatusFromOthers } from "../shared/loop-writes";
import { firedConditionsOutput, planStatus, stepStatus } from "../shared/output-fields";
import { loadStepSummaries, lockedPlanIsCurrent, lockPlan, lockStep } from "../shared/plan-access";
import { parseInput } from "../shared/validation";

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
  hint: z.string(),
});

export type UserDecisionResult = z.infer<typeof userDecisionOutput>;

function conflict(message: string, metadata: Record<string, unknown>): AppError {
  return new AppError("CONFLICT", message, metadata);
}

type DecisionInput = z.output<typeof submitUserDecisionInput>;

/**
 * The common decision as one statement (one round trip, no BEGIN/COMMIT): the
 * engine decided it ahead (`decideCommonReviewDecision`); the statement locks
 * the plan, finds its one pending review (matching the caller's review and
 * step when given) and locks the step, checks the engine's preconditions,
 * picks the plan's next status from the stored steps, and writes the step, the
 * review, the decision, the plan and the audit rows only if all held.
 * Undefined otherwise: the caller decides on a full snapshot, which also gives
 * the precise CONFLICT when someone else acted first.
 */
async function decideInOneStatement(
  ctx: ServiceContext,
  input: DecisionInput,
  feedback: string | null,
  now: string,
): Promise<UserDecisionResult | undefined> {
  const decided = decideCommonReviewDecision(input.planId, input.decision, feedback);
  const { planStatusWhen: when, preconditions: pre } = decided;
  const ends = isTerminalStepStatus(decided.stepStatus);
  const [row] = await selectRows<{
    ok: boolean;
    planStatus: PlanStatus;
    stepId: string;
    reviewRequestId: string;
    instructions: string;
  }>(
    ctx.db,
    sql`
    with plan as materialized (
      select id, status, awaiting_steps, pause_reason, xmin as version from research_plan
      where id = ${input.planId}::uuid and tenant_id = ${ctx.tenantId}::uuid
      for update
    ), review as materialized (
      select id, step_id from review_request
      where plan_id = (select id from plan) and status = 'pending'
        and (select count(*) from review_request
          where plan_id = (select id from plan) and status = 'pending') = 1
        and (${input.reviewRequestId ?? null}::uuid is null or id = ${input.reviewRequestId ?? null}::uuid)
        and (${input.stepId ?? null}::uuid is null or step_id = ${input.stepId ?? null}::uuid)
    ), step as materialized (
      select id, step_order, status, instructions from plan_step
      where id = (select step_id from review) and tenant_id = ${ctx.tenantId}::uuid
      for update
    ), decided as materialized (
      select step.id as step_id, step.step_order, review.id as review_id,
        step.instructions || ${decided.instructionsSuffix}::text as instructions,
        ${planStatusFromOthers(when, pre.terminalStepStatuses)} as plan_status
      from plan join review on true join step on true
        left join plan_step other on other.plan_id = plan.id and other.id <> step.id
      where ${lockedPlanIsCurrent(input.planId)}
        and plan.status = ${pre.planStatus} and plan.awaiting_steps is null and plan.pause_reason is null
        and step.status = ${pre.stepStatus}
        and (not ${pre.needsNoConditions}::boolean or not exists (
          select 1 from plan_branching_condition c where c.after_step_id = step.id))
      group by step.id, step.step_order, review.id, step.instructions
    ), step_update as (
      update plan_step set status = ${decided.stepStatus}::step_status,
        instructions = decided.instructions,
        failure_reason = ${decided.failureReason}::text,
        started_at = case when ${decided.stepStatus === "in_progress"}::boolean
          then ${now}::timestamptz else started_at end,
        completed_at = case when ${ends}::boolean then ${now}::timestamptz else completed_at end,
        lease_expires_at = null, updated_at = ${now}::timestamptz
      from decided
      where plan_step.id = decided.step_id
    ), review_update as (
      update review_request set status = 'decided', decided_at = ${now}::timestamptz
      from decided
      where review_request.id = decided.review_id
    ), decision_insert as (
      insert into review_decision (tenant_id, review_request_id, plan_id, step_id, decision,
        feedback, decided_by_type, decided_by_id, decided_by_label, created_at)
      select ${ctx.tenantId}::uuid, decided.review_id, ${input.planId}::uuid, decided.step_id,
        ${input.decision}::review_decision_kind, ${feedback}::text,
        ${ctx.actor.type}::actor_type, ${ctx.actor.id}::uuid, ${ctx.actor.label}::text,
        ${now}::timestamptz
      from decided
    ), ${decidedPlanUpdate(input.planId, now)}, audit as (
      ${auditInsert(ctx, decided.audit, {
        when: sql`select 1 from decided`,
        stepIdFrom: sql`(select step_id from decided)`,
        payloadFrom: sql`case when r."eventType" = 'step_failed'
          then jsonb_build_object('stepOrder', (select step_order from decided))
          else jsonb_build_object('reviewRequestId', (select review_id from decided)) end`,
      })}
    )
    select exists (select 1 from decided) as ok,
      (select plan_status from decided) as "planStatus",
      (select step_id from decided) as "stepId",
      (select review_id from decided) as "reviewRequestId",
      (select instructions from decided) as instructions`,
  );
  if (!row?.ok) return undefined;
  // decidedPlanUpdate queued plan.completed or plan.failed in the statement.
  if (isTerminalPlanStatus(row.planStatus)) noteNotificationQueued();
  const outcome = {
    planStatus: row.planStatus,
    awaitingSteps: null,
  } as const;
  return {
    planId: input.planId,
    stepId: row.stepId,
    reviewRequestId: row.reviewRequestId,
    decision: input.decision,
    stepStatus: decided.stepStatus,
    planStatus: row.planStatus,
    instructions: row.instructions,
    firedConditions: [],
    hint: decisionHint(input.decision, outcome),
  };
}

export async function submitUserDecision(
  ctx: ServiceContext,
  raw: z.input<typeof submitUserDecisionInput>,
): Promise<UserDecisionResult> {
  const input = parseInput(submitUserDecisionInput, raw);
  const fast = await decideInOneStatement(
    ctx,
    input,
    input.feedback && input.feedback.length > 0 ? input.feedback : null,
    new Date().toISOString(),
  );
  if (fast) return fast;
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

    const [conditions, steps, pending] = await Promise.all([
      tx
        .select({
          id: planBranchingConditions.id,
          conditionExpression: planBranchingConditions.conditionExpression,
          ifTrueAction: planBranchingConditions.ifTrueAction,
          actionParams: planBranchingConditions.actionParams,
        })
        .from(planBranchingConditions)
        .where(
          and(
            eq(planBranchingConditions.afterStepId, step.id),
            eq(planBranchingConditions.tenantId, ctx.tenantId),
          ),
        )
        .orderBy(asc(planBranchingConditions.position)),
      loadStepSummaries(tx, ctx, plan.id),
      tx
        .select({ id: reviewRequests.id, stepId: reviewRequests.stepId })
        .from(reviewRequests)
        .where(and(eq(reviewRequests.planId, plan.id), eq(reviewRequests.status, "pending"))),
    ]);
    const feedback = input.feedback && input.feedback.length > 0 ? input.feedback : null;
    const decided = decideReviewDecision(
      {
        id: plan.id,
        status: plan.status,
        awaitingSteps: plan.awaitingSteps,
        steps,
        pendingReviews: pending,
        // A pause holds: an approve does not complete the plan around a failed server step.
        pausedOnFailedStepId:
          plan.pauseReason?.type === "tool_error" ? plan.pauseReason.stepId : null,
      },
      {
        id: step.id,
        stepOrder: step.stepOrder,
        status: "awaiting_input",
        instructions: step.instructions,
        result: isRecord(step.result) ? step.result : null,
        confidence: step.confidence,
      },
      conditions,
      { reviewRequestId: review.id, decision: input.decision, feedback },
    );
    const now = new Date().toISOString();
    const stepStatus = decided.stepStatus;
    const ends = isTerminalStepStatus(stepStatus);
    // The step row, the review and its decision, the engine's effects and the
    // audit rows, as one statement.
    const parts: SQL[] = [
      sql`step_update as (
        update plan_step set status = ${stepStatus}::step_status,
          instructions = ${decided.instructions},
          failure_reason = ${decided.failureReason}::text,
          started_at = case when ${stepStatus === "in_progress"}::boolean
            then ${now}::timestamptz else started_at end,
          completed_at = case when ${ends}::boolean then ${now}::timestamptz else completed_at end,
          lease_expires_at = null,
          updated_at = ${now}::timestamptz
        where id = ${step.id}::uuid
      )`,
      sql`review_update as (
        update review_request set status = 'decided', decided_at = ${now}::timestamptz
        where id = ${review.id}::uuid
      )`,
      sql`decision_insert as (
        insert into review_decision (tenant_id, review_request_id, plan_id, step_id, decision,
          feedback, decided_by_type, decided_by_id, decided_by_label, created_at)
        values (${ctx.tenantId}::uuid, ${review.id}::uuid, ${plan.id}::uuid, ${step.id}::uuid,
          ${input.decision}::review_decision_kind, ${feedback}::text,
          ${ctx.actor.type}::actor_type, ${ctx.actor.id}::uuid, ${ctx.actor.label}::text,
          ${now}::timestamptz)
      )`,
      ...loopEffectsSql(plan.id, step.id, decided, now),
    ];
    await tx.execute(sql`with ${sql.join(parts, sql`, `)} ${auditInsert(ctx, decided.audit)}`);
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
      hint: decisionHint(input.decision, decided),
    };
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
