import type { ReactNode } from "react";
import type { PendingReviewView } from "@/lib/services/reviews/review-view";
import { ReviewContent } from "./review-content";

/**
 * What leads a pending review wherever a person decides it (the plan page's
 * panel, the review card in a chat client): who asks and when, what they
 * decide on (ReviewContent), the claims to check (`children`: the step's
 * evidence), and a warning when the decision ends the plan.
 */
export function ReviewLead({
  review,
  children,
}: {
  review: PendingReviewView;
  children?: ReactNode;
}) {
  return (
    <>
      <h2 id="review-heading">
        Your review is needed{review.stepOrder ? ` on step ${review.stepOrder}` : ""}
      </h2>
      <p className="muted">
        Asked by {review.requestedBy} at{" "}
        <time dateTime={review.requestedAt}>
          {review.requestedAt.slice(0, 19).replace("T", " ")} UTC
        </time>
      </p>
      <ReviewContent review={review} />
      {children}
      {review.lastOpenStep ? (
        <p className="notice notice-warning" role="status" data-testid="review-ends-plan">
          This is the plan's last open step: approving or skipping it completes the plan, and
          rejecting it fails the plan. Modify sends it back to the agent.
        </p>
      ) : null}
    </>
  );
}
