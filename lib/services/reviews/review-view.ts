/**
 * A review as Cairn's readers read it: one schema and one mapper for each way
 * a review is shown, both over the request's own facts (`reviewRequestView`).
 * Every review of a plan with its decision, as get_research_context pages
 * them (`reviewRecord`, read with `reviewRecordColumns`, mapped by
 * `reviewRecordOf`), and a review waiting for a person, as the plan page's
 * panel, the review card and the inbox show it (`pendingReviewView`, read with
 * `reviewShownColumns`, mapped by `pendingReviewOf`). Long values are cut in
 * the database either way.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { planSteps, reviewDecisions, reviewRequests } from "../../db/schema";
import { isoTime } from "../../db/statement";
import { isLastOpenStep } from "../../plan-engine/plan-status";
import { DECISION_CHANNELS, type DecisionChannel, type StepStatus } from "../../plan-engine/states";
import { cutColumns, shortenedOf } from "../shared/bounded";
import { reviewRequestFields } from "../shared/fields";
import { approvalsOutput } from "../shared/output-fields";
import {
  type ProposalRead,
  proposalFieldRow,
  proposalFields,
  proposalRead,
  proposalSql,
  shortenedRow,
  shortenedSql,
} from "../views/full-values";
import type { ApprovalsShown } from "./approvals";
import { currentReviewDigest } from "./review-digest";

const iso = (value: Date | null) => (value ? value.toISOString() : null);

/** Who asked for a review, when, its deadline and assignment: as every reader shows them. */
export const reviewRequestView = (r: {
  questions: string[];
  requestedByLabel: string;
  createdAt: Date;
  dueAt: Date | null;
  onTimeout: string | null;
  escalatedAt: Date | null;
  assignedUserId: string | null;
  assignedRole: string | null;
}) => ({
  questions: r.questions,
  requestedBy: r.requestedByLabel,
  requestedAt: r.createdAt.toISOString(),
  dueAt: iso(r.dueAt),
  onTimeout: r.onTimeout,
  escalatedAt: iso(r.escalatedAt),
  assignedUserId: r.assignedUserId,
  assignedRole: r.assignedRole,
});

/** What a review record says it shortened: the names of the values cut. */
const REVIEW_RECORD_PARTS = ["summary", "proposedResult", "feedback"] as const;

/** A review of a plan with its decision, as get_research_context gives it (its output schema's). */
export const reviewRecord = z.object({
  reviewRequestId: z.string(),
  stepId: z.string(),
  stepOrder: z.number().nullable(),
  status: z.string(),
  summary: z.string(),
  questions: z.array(z.string()),
  ...reviewRequestFields,
  assignedRole: z.string().nullable(),
  // What the agent asked the person to accept, and the digest of what the review shows.
  proposedResult: z.record(z.string(), z.unknown()).nullable(),
  proposedConfidence: z.number().nullable(),
  contentDigest: z.string(),
  // Pending only: the digest over the step's instructions as they are now
  // (differs from contentDigest when they were rewritten while it waited).
  currentDigest: z.string().nullable(),
  decision: z
    .object({
      decision: z.string(),
      feedback: z.string().nullable(),
      decidedBy: z.string(),
      decidedAt: z.string(),
      // web: a person in Cairn; relayed: an agent (decidedBy names its key or app); deadline: Cairn.
      channel: z.enum(DECISION_CHANNELS),
    })
    .nullable(),
  shortened: z.array(z.string()),
});
export type ReviewRecord = z.infer<typeof reviewRecord>;

/**
 * What a review record is read from: the review joined with its step and its
 * decision (left joins), the summary, proposal and feedback cut.
 */
export const reviewRecordColumns = {
  id: reviewRequests.id,
  stepId: reviewRequests.stepId,
  stepOrder: planSteps.stepOrder,
  status: reviewRequests.status,
  questions: reviewRequests.questions,
  requestedByLabel: reviewRequests.requestedByLabel,
  createdAt: reviewRequests.createdAt,
  dueAt: reviewRequests.dueAt,
  onTimeout: reviewRequests.onTimeout,
  escalatedAt: reviewRequests.escalatedAt,
  assignedUserId: reviewRequests.assignedUserId,
  assignedRole: reviewRequests.assignedRole,
  proposedConfidence: reviewRequests.proposedConfidence,
  contentDigest: reviewRequests.contentDigest,
  decision: reviewDecisions.decision,
  decidedByLabel: reviewDecisions.decidedByLabel,
  decidedAt: reviewDecisions.createdAt,
  channel: reviewDecisions.channel,
  ...cutColumns({
    summary: reviewRequests.summary,
    proposedResult: reviewRequests.proposedResult,
    feedback: reviewDecisions.feedback,
  }),
};

/** A row read with `reviewRecordColumns` (the cut values and their flags as the database gives them). */
type ReviewRecordRow = Parameters<typeof reviewRequestView>[0] & {
  id: string;
  stepId: string;
  stepOrder: number | null;
  status: string;
  proposedConfidence: number | null;
  contentDigest: string;
  decision: string | null;
  decidedByLabel: string | null;
  decidedAt: Date | null;
  channel: DecisionChannel | null;
} & Record<
    (typeof REVIEW_RECORD_PARTS)[number] | `${(typeof REVIEW_RECORD_PARTS)[number]}Cut`,
    unknown
  >;

/** A row of `reviewRecordColumns` as a review record; `currentDigest`: a pending review's, over its step as it is now. */
export function reviewRecordOf(r: ReviewRecordRow, currentDigest: string | null): ReviewRecord {
  return {
    reviewRequestId: r.id,
    stepId: r.stepId,
    stepOrder: r.stepOrder,
    status: r.status,
    summary: r.summary as string,
    ...reviewRequestView(r),
    // Every writer stores an object (request_user_review's proposedResult), or its preview.
    proposedResult: r.proposedResult as Record<string, unknown> | null,
    proposedConfidence: r.proposedConfidence,
    contentDigest: r.contentDigest,
    currentDigest,
    decision:
      r.decision && r.decidedByLabel && r.decidedAt && r.channel
        ? {
            decision: r.decision,
            feedback: r.feedback as string | null,
            decidedBy: r.decidedByLabel,
            decidedAt: r.decidedAt.toISOString(),
            channel: r.channel,
          }
        : null,
    shortened: shortenedOf(r, REVIEW_RECORD_PARTS),
  };
}

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

/**
 * A review as every place that shows it reads it (the plan page's panel, the
 * review card, the inbox): one select list over a review (alias `review`) and
 * its step (alias `step`), its long texts shortened in the database
 * (`shortenedSql`), so a page that refreshes itself never reads them whole.
 * The proposal is read field by field, each cut (`proposalSql`), and shown
 * within a size (`shownProposal`). The digest needs hashing
 * only when the step's instructions changed since the request: everything
 * else it covers is the review's own and never changes.
 */
export const reviewShownColumns = sql`review.id as "reviewRequestId", review.plan_id as "planId",
  review.step_id as "stepId", step.step_order as "stepOrder",
  ${shortenedSql(sql`review.summary`)} as summary, review.questions,
  ${proposalSql(sql`review.proposed_result`)} as "proposalRead",
  review.proposed_confidence as "proposedConfidence",
  case when review.proposed_result is null and step.output_schema is not null
    then ${shortenedSql(sql`jsonb_pretty(step.output_schema)`)} end as "resultSchema",
  ${shortenedSql(sql`step.instructions`)} as "stepInstructions",
  case when step.instructions = review.step_instructions then review.content_digest
    else ${currentReviewDigest} end as "contentDigest",
  step.instructions <> review.step_instructions as "instructionsChanged",
  review.requested_by_label as "requestedBy", review.created_at as "requestedAt",
  review.due_at as "dueAt", review.on_timeout as "onTimeout",
  review.escalated_at as "escalatedAt", review.assigned_user_id as "assignedUserId",
  to_jsonb(review.assigned_user_ids) as "assignedUserIds", review.assigned_role as "assignedRole"`;

/** A row of `reviewShownColumns`. */
export const reviewShownRow = pendingReviewView
  .omit({
    proposal: true,
    proposalFieldsOmitted: true,
    lastOpenStep: true,
    assignedUserLabel: true,
    approvals: true,
  })
  .extend({
    stepOrder: z.number(),
    proposalRead: proposalRead.nullable(),
    requestedAt: isoTime,
    dueAt: isoTime.nullable(),
    escalatedAt: isoTime.nullable(),
    /** An escalation level's people, when the review is assigned to several (docs/reviews.md). */
    assignedUserIds: z.array(z.string()).nullable(),
  });
export type ReviewShownRow = z.infer<typeof reviewShownRow>;

/** A review waiting for a person as read (`reviewShownColumns`), with every step's status and its approvals. */
export type PendingReviewRow = ReviewShownRow & {
  steps: { id: string; status: StepStatus }[];
  approvals: ApprovalsShown | null;
};

/** A review's proposal as shown (proposalFields), or none. */
export function shownProposal(read: ProposalRead | null) {
  if (read === null) return { proposal: null, proposalFieldsOmitted: 0 };
  const { fields, omitted } = proposalFields(read);
  return { proposal: fields, proposalFieldsOmitted: omitted };
}

/** The review as shown, with its assignee's name from the team. */
export function pendingReviewOf(
  { pendingReview }: { pendingReview: PendingReviewRow | null },
  members: TeamMember[],
): PendingReviewView | null {
  if (!pendingReview) return null;
  const { proposalRead, steps, assignedUserIds, ...review } = pendingReview;
  return {
    ...review,
    ...shownProposal(proposalRead),
    lastOpenStep: isLastOpenStep(steps, review.stepId),
    assignedUserLabel: assigneeLabel(
      review.assignedUserId ? [review.assignedUserId] : (assignedUserIds ?? []),
      members,
    ),
  };
}

/** The people a review is assigned to, by name; null when it is assigned to no one by name. */
export function assigneeLabel(userIds: readonly string[], members: TeamMember[]): string | null {
  if (userIds.length === 0) return null;
  return userIds
    .map((id) => members.find((m) => m.userId === id)?.label ?? "a former team member")
    .join(", ");
}
