"use client";

import { useActionState, useId } from "react";
import { SubmitButton } from "@/app/_components/submit-button";
import { assignReviewAction } from "@/app/(app)/plans/[planId]/actions";
import type { TeamMember } from "@/lib/services/reviews/review-view";
import { IDLE } from "@/lib/web/action-state";

/**
 * Take a review ("Assign to me") or hand it over to a colleague, with a note
 * they are sent, or back to the team. Anyone in the team may still answer;
 * this only says who is asked.
 */
export function ReviewAssignment({
  planId,
  reviewRequestId,
  assignedUserId,
  currentUserId,
  members,
}: {
  planId: string;
  reviewRequestId: string;
  assignedUserId: string | null;
  currentUserId: string;
  members: TeamMember[];
}) {
  const [state, action] = useActionState(assignReviewAction, IDLE);
  const selectId = useId();
  const noteId = useId();
  return (
    <form action={action} className="form form-inline" data-testid="review-assignment">
      <input type="hidden" name="planId" value={planId} />
      <input type="hidden" name="reviewRequestId" value={reviewRequestId} />
      {assignedUserId === currentUserId ? null : (
        <SubmitButton name="take" value="me" className="button">
          Assign to me
        </SubmitButton>
      )}
      <label htmlFor={selectId}>Hand off to</label>
      <select id={selectId} name="handTo" defaultValue="">
        <option value="" disabled>
          Choose…
        </option>
        <option value="team">The team (nobody in particular)</option>
        {members
          .filter((member) => member.userId !== assignedUserId)
          .map((member) => (
            <option key={member.userId} value={member.userId}>
              {member.label}
            </option>
          ))}
      </select>
      <label htmlFor={noteId}>Note</label>
      <input
        id={noteId}
        name="note"
        maxLength={2000}
        placeholder="For the colleague (optional)"
        data-testid="handover-note"
      />
      <SubmitButton name="handoff" value="1" className="button">
        Hand off
      </SubmitButton>
      {state.status === "idle" ? null : (
        <p
          role={state.status === "success" ? "status" : "alert"}
          className={`notice notice-${state.status}`}
          data-testid="assign-message"
        >
          {state.message}
        </p>
      )}
    </form>
  );
}
