import { Time } from "@/app/_components/time";

/** A pending review's deadline and assignment, as the plan page and the inbox show them. */
export type ReviewFactsData = {
  dueAt: string | null;
  onTimeout: string | null;
  escalatedAt: string | null;
  assignedUserLabel: string | null;
  assignedRole: string | null;
  /** A review needing several people's approval: k of N and who approved. */
  approvals?: { count: number; required: number; approvedBy: string[] } | null;
};

const THEN: Record<string, string> = {
  approve: "Cairn approves the step",
  reject: "Cairn rejects the step (the plan fails)",
  skip: "Cairn skips the step",
  escalate: "it goes to the admins",
};

export function assigneeText(review: Pick<ReviewFactsData, "assignedUserLabel" | "assignedRole">) {
  if (review.assignedUserLabel) return review.assignedUserLabel;
  if (review.assignedRole) return `every ${review.assignedRole}`;
  return "the team";
}

export function ReviewFacts({ review }: { review: ReviewFactsData }) {
  return (
    <p className="muted" data-testid="review-facts">
      Assigned to <strong data-testid="review-assignee">{assigneeText(review)}</strong>
      {" · "}
      {review.escalatedAt ? (
        <span data-testid="review-deadline">
          Escalated to the admins at <Time iso={review.escalatedAt} />: the deadline passed
        </span>
      ) : review.dueAt ? (
        <span data-testid="review-deadline">
          Deadline <Time iso={review.dueAt} />
          {review.onTimeout ? `, then ${THEN[review.onTimeout] ?? review.onTimeout}` : ""}
        </span>
      ) : (
        <span data-testid="review-deadline">No deadline</span>
      )}
      {review.approvals ? (
        <>
          {" · "}
          <span data-testid="review-approvals">
            <strong>
              {review.approvals.count} of {review.approvals.required}
            </strong>{" "}
            approvals
            {review.approvals.approvedBy.length > 0
              ? ` (approved by ${review.approvals.approvedBy.join(", ")})`
              : ""}
            : each person's approval counts once; one reject, modify or skip decides
          </span>
        </>
      ) : null}
    </p>
  );
}
