"use client";

import { startTransition, useActionState, useId, useState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { Time } from "@/app/_components/time";
import { snoozeReviewAction, unsnoozeReviewAction } from "@/app/(app)/plans/[planId]/actions";
import {
  SNOOZE_CHOICES,
  SNOOZE_MORNING_HOUR,
  type SnoozeChoice,
} from "@/lib/plan-engine/review-snooze";
import { IDLE } from "@/lib/web/action-state";

const CHOICE_LABELS: Record<SnoozeChoice, string> = {
  hour: "for an hour",
  tomorrow: `until tomorrow, ${String(SNOOZE_MORNING_HOUR).padStart(2, "0")}:00 your time`,
  at: "until a time you choose",
};

/**
 * Snooze a review out of your own inbox until a time (docs/reviews.md,
 * "Snooze"), or, while it is snoozed, un-snooze it. "Tomorrow" and a chosen
 * time are read in the browser's own time zone, sent with the form.
 */
export function ReviewSnooze({
  planId,
  reviewRequestId,
  snoozedUntil,
}: {
  planId: string;
  reviewRequestId: string;
  /** When the user's running snooze of it ends; undefined when they have none. */
  snoozedUntil: string | undefined;
}) {
  const [snoozed, snooze, snoozing] = useActionState(snoozeReviewAction, IDLE);
  const [unsnoozed, unsnooze] = useActionState(unsnoozeReviewAction, IDLE);
  const [choice, setChoice] = useState<SnoozeChoice>("hour");
  const choiceId = useId();
  const atId = useId();
  return (
    <div data-testid="review-snooze">
      <form
        // Sent from onSubmit, not as the form's action: React resets a form after
        // its action, which would show the first choice while the state keeps
        // another, and lose a refused time the reviewer would correct.
        onSubmit={(event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          form.set("timeZone", Intl.DateTimeFormat().resolvedOptions().timeZone);
          startTransition(() => snooze(form));
        }}
        className="form form-inline"
      >
        <input type="hidden" name="planId" value={planId} />
        <input type="hidden" name="reviewRequestId" value={reviewRequestId} />
        <label htmlFor={choiceId}>Snooze</label>
        <select
          id={choiceId}
          name="until"
          value={choice}
          onChange={(event) =>
            setChoice(SNOOZE_CHOICES.find((c) => c === event.target.value) ?? "hour")
          }
        >
          {SNOOZE_CHOICES.map((c) => (
            <option key={c} value={c}>
              {CHOICE_LABELS[c]}
            </option>
          ))}
        </select>
        {choice === "at" ? (
          <>
            <label htmlFor={atId}>Back at</label>
            <input id={atId} type="datetime-local" name="at" required />
          </>
        ) : null}
        <button type="submit" className="button" disabled={snoozing} aria-disabled={snoozing}>
          Snooze
        </button>
      </form>
      <ActionMessage state={snoozed} />
      {snoozedUntil ? (
        <form action={unsnooze} className="form form-inline">
          <input type="hidden" name="planId" value={planId} />
          <input type="hidden" name="reviewRequestId" value={reviewRequestId} />
          <p data-testid="snoozed-until">
            Snoozed until <Time iso={snoozedUntil} />: out of your inbox, not your colleagues'.
          </p>
          <SubmitButton>Un-snooze</SubmitButton>
        </form>
      ) : null}
      <ActionMessage state={unsnoozed} />
    </div>
  );
}
