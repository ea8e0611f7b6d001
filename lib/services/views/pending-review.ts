/**
 * The review waiting for a person, as every place that puts it before them
 * shows it: the plan page's panel and the review card inside an MCP client
 * (lib/services/reviews/review-card.ts). Long values come shortened, so a page
 * that refreshes itself never carries a long proposal whole.
 */
import "server-only";
import { z } from "zod";
import { isLastOpenStep } from "../../plan-engine/loop";
import type { ServiceContext } from "../shared/context";
import { shorten, shortenedRow, shortenJson } from "./full-values";
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
  /** The proposed result as indented JSON; null when the agent proposed none. */
  proposal: shortenedRow.nullable(),
  proposedConfidence: z.number().nullable(),
  stepInstructions: shortenedRow,
  /** The step's instructions changed after the review was requested. */
  instructionsChanged: z.boolean(),
  /** Every other step has ended: this decision ends the plan. */
  lastOpenStep: z.boolean(),
  requestedBy: z.string(),
  requestedAt: z.string(),
  dueAt: z.string().nullable(),
  onTimeout: z.string().nullable(),
  escalatedAt: z.string().nullable(),
  assignedUserId: z.string().nullable(),
  assignedUserLabel: z.string().nullable(),
  assignedRole: z.string().nullable(),
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

/** The plan's pending review, if any, with its assignee's name from the team. */
export function pendingReviewOf(page: PlanPage, members: TeamMember[]): PendingReviewView | null {
  const pending = page.reviews.find((r) => r.status === "pending");
  if (!pending) return null;
  const step = page.steps.find((s) => s.stepId === pending.stepId);
  return {
    planId: page.plan.planId,
    reviewRequestId: pending.reviewRequestId,
    contentDigest: pending.currentDigest ?? pending.contentDigest,
    stepOrder: pending.stepOrder,
    summary: shorten(pending.summary),
    questions: pending.questions,
    proposal: pending.proposedResult === null ? null : shortenJson(pending.proposedResult),
    proposedConfidence: pending.proposedConfidence,
    stepInstructions: shorten(step?.instructions ?? ""),
    lastOpenStep: isLastOpenStep(
      page.steps.map((s) => ({ id: s.stepId, status: s.status })),
      pending.stepId,
    ),
    instructionsChanged: pending.instructionsChanged,
    requestedBy: pending.requestedBy,
    requestedAt: pending.requestedAt,
    dueAt: pending.dueAt,
    onTimeout: pending.onTimeout,
    escalatedAt: pending.escalatedAt,
    assignedUserId: pending.assignedUserId,
    assignedUserLabel: pending.assignedUserId
      ? (members.find((m) => m.userId === pending.assignedUserId)?.label ?? "a former team member")
      : null,
    assignedRole: pending.assignedRole,
  };
}
