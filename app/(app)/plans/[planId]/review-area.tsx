"use client";

import { type ReactNode, useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { ReviewAssignment } from "@/app/_components/review/review-assignment";
import { ReviewDecisionForm } from "@/app/_components/review/review-decision-form";
import { ReviewFacts } from "@/app/_components/review/review-facts";
import { ReviewLead } from "@/app/_components/review/review-lead";
import { ReviewSnooze } from "@/app/_components/review/review-snooze";
import type { PendingReviewView, TeamMember } from "@/lib/services/reviews/review-view";
import { IDLE } from "@/lib/web/action-state";
import { decideReviewAction } from "./actions";

/**
 * The checkpoint, led by what the person decides on: the agent's request and
 * proposal (ReviewContent) and the claims so far with their sources, then the decision (ReviewDecisionForm), then its
 * deadline and assignee (ReviewFacts, ReviewAssignment), and the user's snooze (ReviewSnooze). Stays mounted while
 * the page refreshes itself, so the reviewer's typing survives, and the answer
 * to their decision (including "the plan changed under you") stays on screen
 * after the pending review is gone. The decision form is keyed to the review
 * and its digest, the hand-off form to the review (sibling keys must differ):
 * a refresh that brings another review, or changed content, gives a fresh
 * form, so feedback typed or a reject armed for one review is never sent
 * against another.
 */
export function ReviewArea({
  planId,
  planStatus,
  review,
  evidence,
  currentUserId,
  members,
  snoozedUntil,
}: {
  planId: string;
  planStatus: string;
  review: PendingReviewView | null;
  /** When the user's snooze of the pending review ends, if they snoozed it. */
  snoozedUntil: string | undefined;
  /** The claims to check, rendered on the server (ReviewEvidence). */
  evidence: ReactNode;
  currentUserId: string;
  members: TeamMember[];
}) {
  const [state, action] = useActionState(decideReviewAction, IDLE);

  if (!review) {
    if (state.status === "idle") return null;
    return (
      <section className="card review" aria-labelledby="review-heading">
        <h2 id="review-heading">Review</h2>
        <ActionMessage state={state} />
        <p data-testid="current-state">
          The plan is now <strong>{planStatus.replace("_", " ")}</strong>.
        </p>
      </section>
    );
  }

  return (
    <section
      id="review"
      className="card review review-pending"
      aria-labelledby="review-heading"
      data-testid="review-panel"
    >
      <ReviewLead review={review}>{evidence}</ReviewLead>
      <ReviewDecisionForm review={review} action={action} state={state} />
      <ReviewFacts review={review} />
      <ReviewAssignment
        key={review.reviewRequestId}
        planId={planId}
        reviewRequestId={review.reviewRequestId}
        assignedUserId={review.assignedUserId}
        currentUserId={currentUserId}
        members={members}
      />
      <ReviewSnooze
        key={`snooze-${review.reviewRequestId}`}
        planId={planId}
        reviewRequestId={review.reviewRequestId}
        snoozedUntil={snoozedUntil}
      />
    </section>
  );
}
