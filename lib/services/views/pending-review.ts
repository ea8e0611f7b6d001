/**
 * The review waiting for a person, as every place that puts it before them
 * shows it: the plan page's panel and the review card inside an MCP client
 * (lib/services/reviews/review-card.ts). Long values come shortened, so a page
 * that refreshes itself never carries a long proposal whole.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { selectRows } from "../../db/rows";
import { isoTime } from "../../db/statement";
import { isLastOpenStep } from "../../plan-engine/plan-status";
import { STEP_STATUSES, type StepStatus } from "../../plan-engine/states";
import { type ApprovalsShown, approvalsShown } from "../reviews/approvals";
import { currentReviewDigest } from "../reviews/review-digest";
import type { ServiceContext } from "../shared/context";
import { reviewRequestFields } from "../shared/fields";
import { approvalsOutput } from "../shared/output-fields";
import {
  proposalFieldRow,
  proposalFields,
  shorten,
  shortenedRow,
  shortenJson,
} from "./full-values";
import type { PlanPage } from "./plan-views";
import { listTenantUsers } from "./users-and-keys";

export type TeamMember = { userId: string; label: string };

/** The review as shown (also the review card's read, so its schema is published). */
export const pendingReviewView = z.object({
  planId: z.string(),
  reviewRequestId: z.string(),
  /** The digest of what is shown, sent with the decision. */
  contentDigest: z.string(),
  stepOrder: z.number().nullable(),
  summary: shortenedRow,
  questions: z.array(z.string()),
  /** The proposed result's fields in the agent's order (proposalFields); null when the agent proposed none. */
  proposal: z.array(proposalFieldRow).nullable(),
  /** The proposal's fields not listed in `proposal` (over what is shown of it); the whole has them. */
  proposalFieldsOmitted: z.number(),
  stepId: z.string(),
  /**
   * The step's outputSchema as indented JSON when the agent proposed no result:
   * an approve then needs the result the person enters, which it must accept.
   */
  resultSchema: shortenedRow.nullable(),
  proposedConfidence: z.number().nullable(),
  stepInstructions: shortenedRow,
  /** The step's instructions changed after the review was requested. */
  instructionsChanged: z.boolean(),
  /** Every other step has ended: this decision ends the plan. */
  lastOpenStep: z.boolean(),
  ...reviewRequestFields,
  assignedUserLabel: z.string().nullable(),
  assignedRole: z.string().nullable(),
  /** A review needing several people's approval: k of N and who approved; null when one is enough. */
  approvals: approvalsOutput.nullable(),
});

export type PendingReviewView = z.infer<typeof pendingReviewView>;

/** The team's active members, as the review's assignee is named. */
export async function teamMembers(ctx: ServiceContext): Promise<TeamMember[]> {
  const members = await listTenantUsers(ctx);
  return members
    .filter((member) => member.disabledAt === null)
    .map((member) => ({
      userId: member.userId,
      label: member.name ? `${member.name} <${member.email}>` : member.email,
    }));
}

/** What the view is built from, read by the plan page (`pendingReviewOf`) or on its own (`readPendingReview`). */
type PendingReviewSource = {
  planId: string;
  review: {
    reviewRequestId: string;
    stepId: string;
    stepOrder: number | null;
    /** The digest of what the review shows now (its step's instructions as they are). */
    currentDigest: string;
    instructionsChanged: boolean;
    summary: string;
    questions: string[];
    proposedResult: Record<string, unknown> | null;
    proposedConfidence: number | null;
    requestedBy: string;
    requestedAt: string;
    dueAt: string | null;
    onTimeout: string | null;
    escalatedAt: string | null;
    assignedUserId: string | null;
    assignedRole: string | null;
    approvals: ApprovalsShown | null;
  };
  stepInstructions: string;
  outputSchema: Record<string, unknown> | null;
  steps: { id: string; status: StepStatus }[];
};

/** A review's proposal as shown (proposalFields), or none. */
export function shownProposal(proposedResult: Record<string, unknown> | null) {
  if (proposedResult === null) return { proposal: null, proposalFieldsOmitted: 0 };
  const { fields, omitted } = proposalFields(proposedResult);
  return { proposal: fields, proposalFieldsOmitted: omitted };
}

function showPendingReview(
  { planId, review, stepInstructions, outputSchema, steps }: PendingReviewSource,
  members: TeamMember[],
): PendingReviewView {
  return {
    planId,
    reviewRequestId: review.reviewRequestId,
    contentDigest: review.currentDigest,
    stepOrder: review.stepOrder,
    summary: shorten(review.summary),
    questions: review.questions,
    ...shownProposal(review.proposedResult),
    stepId: review.stepId,
    resultSchema:
      review.proposedResult === null && outputSchema !== null ? shortenJson(outputSchema) : null,
    proposedConfidence: review.proposedConfidence,
    stepInstructions: shorten(stepInstructions),
    lastOpenStep: isLastOpenStep(steps, review.stepId),
    instructionsChanged: review.instructionsChanged,
    requestedBy: review.requestedBy,
    requestedAt: review.requestedAt,
    dueAt: review.dueAt,
    onTimeout: review.onTimeout,
    escalatedAt: review.escalatedAt,
    assignedUserId: review.assignedUserId,
    assignedUserLabel: review.assignedUserId
      ? (members.find((m) => m.userId === review.assignedUserId)?.label ?? "a former team member")
      : null,
    assignedRole: review.assignedRole,
    approvals: review.approvals,
  };
}

/** The plan's pending review, if any, with its assignee's name from the team. */
export function pendingReviewOf(page: PlanPage, members: TeamMember[]): PendingReviewView | null {
  const pending = page.reviews.find((r) => r.status === "pending");
  if (!pending) return null;
  const step = page.steps.find((s) => s.stepId === pending.stepId);
  return showPendingReview(
    {
      planId: page.plan.planId,
      review: { ...pending, currentDigest: pending.currentDigest ?? pending.contentDigest },
      stepInstructions: step?.instructions ?? "",
      outputSchema: step?.outputSchema ?? null,
      steps: page.steps.map((s) => ({ id: s.stepId, status: s.status })),
    },
    members,
  );
}

const pendingReviewRow = z.object({
  reviewRequestId: z.string(),
  stepId: z.string(),
  stepOrder: z.number(),
  currentDigest: z.string(),
  // Only the step's instructions can change what a review shows: the rest is the review's own.
  instructionsChanged: z.boolean(),
  summary: z.string(),
  questions: z.array(z.string()),
  proposedResult: z.record(z.string(), z.unknown()).nullable(),
  proposedConfidence: z.number().nullable(),
  requestedBy: z.string(),
  requestedAt: isoTime,
  dueAt: isoTime.nullable(),
  onTimeout: z.string().nullable(),
  escalatedAt: isoTime.nullable(),
  assignedUserId: z.string().nullable(),
  assignedRole: z.string().nullable(),
  stepInstructions: z.string(),
  outputSchema: z.record(z.string(), z.unknown()).nullable(),
  steps: z.array(z.object({ id: z.string(), status: z.enum(STEP_STATUSES) })),
});

/**
 * The plan's pending review on its own (the review card's read): the review
 * with its step, and every step's status, in one statement; null when none
 * waits. The caller has checked the plan is the tenant's.
 */
export async function readPendingReview(
  ctx: ServiceContext,
  planId: string,
): Promise<PendingReviewView | null> {
  const [[row], members] = await Promise.all([
    selectRows(
      ctx.db,
      pendingReviewRow,
      sql`select review.id as "reviewRequestId", review.step_id as "stepId",
          step.step_order as "stepOrder", ${currentReviewDigest} as "currentDigest",
          step.instructions <> review.step_instructions as "instructionsChanged",
          review.summary, review.questions, review.proposed_result as "proposedResult",
          review.proposed_confidence as "proposedConfidence",
          review.requested_by_label as "requestedBy", review.created_at as "requestedAt",
          review.due_at as "dueAt", review.on_timeout as "onTimeout",
          review.escalated_at as "escalatedAt", review.assigned_user_id as "assignedUserId",
          review.assigned_role as "assignedRole", step.instructions as "stepInstructions",
          step.output_schema as "outputSchema",
          (select jsonb_agg(jsonb_build_object('id', s.id, 'status', s.status))
            from plan_step s where s.plan_id = review.plan_id) as steps
        from review_request review join plan_step step on step.id = review.step_id
        where review.plan_id = ${planId}::uuid and review.tenant_id = ${ctx.tenantId}::uuid
          and review.status = 'pending'
        order by review.created_at
        limit 1`,
    ),
    teamMembers(ctx),
  ]);
  if (!row) return null;
  const { stepInstructions, outputSchema, steps, ...review } = row;
  const approvals =
    (await approvalsShown(ctx.db, ctx.tenantId, [review.reviewRequestId])).get(
      review.reviewRequestId,
    ) ?? null;
  return showPendingReview(
    { planId, review: { ...review, approvals }, stepInstructions, outputSchema, steps },
    members,
  );
}
