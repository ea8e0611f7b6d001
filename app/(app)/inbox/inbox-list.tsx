"use client";

import Link from "next/link";
import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { ReviewAssignment } from "@/app/_components/review/review-assignment";
import { ReviewContent } from "@/app/_components/review/review-content";
import { ReviewDecisionForm } from "@/app/_components/review/review-decision-form";
import { ReviewFacts } from "@/app/_components/review/review-facts";
import { ReviewSnooze } from "@/app/_components/review/review-snooze";
import { formatDuration } from "@/app/_components/time";
import { decideReviewAction } from "@/app/(app)/plans/[planId]/actions";
import type { TeamMember } from "@/lib/services/reviews/review-view";
import type { InboxReview } from "@/lib/services/views/review-inbox";
import { IDLE } from "@/lib/web/action-state";

/**
 * The inbox's entries. One decision state for the list, shown above it, so the
 * answer to a decision stays on screen after its review leaves the list.
 */
export function InboxList({
  reviews,
  members,
  currentUserId,
  snoozedUntil,
}: {
  reviews: InboxReview[];
  members: TeamMember[];
  currentUserId: string;
  /** On the Snoozed view: when each review comes back for the viewer. */
  snoozedUntil: Record<string, string>;
}) {
  const [state, action] = useActionState(decideReviewAction, IDLE);
  return (
    <>
      <ActionMessage state={state} />
      <ol className="cards inbox" data-testid="inbox-list">
        {reviews.map((review) => (
          <li
            key={review.reviewRequestId}
            className="card review"
            data-testid="inbox-review"
            aria-labelledby={`review-${review.reviewRequestId}`}
          >
            <h2 id={`review-${review.reviewRequestId}`}>
              <Link href={`/plans/${review.planId}`}>{review.planName}</Link>
              <span className="muted">
                {" "}
                · step {review.stepOrder} ({review.stepType})
              </span>
            </h2>
            <p className="muted">
              Asked by {review.requestedBy} ·{" "}
              <span data-testid="review-waiting">
                waiting {formatDuration(review.waitingSeconds)}
              </span>
            </p>
            <ReviewContent review={review} />
            <ReviewDecisionForm review={review} action={action} state={IDLE} />
            <ReviewFacts review={review} />
            <ReviewAssignment
              planId={review.planId}
              reviewRequestId={review.reviewRequestId}
              assignedUserId={review.assignedUserId}
              currentUserId={currentUserId}
              members={members}
            />
            <ReviewSnooze
              planId={review.planId}
              reviewRequestId={review.reviewRequestId}
              snoozedUntil={snoozedUntil[review.reviewRequestId]}
            />
          </li>
        ))}
      </ol>
    </>
  );
}
