"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { IDLE } from "@/lib/web/action-state";
import { forkFailedPlansAction } from "./actions";

/**
 * The one action of the page: the filter the preview shows, sent again; the
 * server reads the matching plans itself, so what is forked is the team's own.
 */
export function BulkForkForm({
  filter,
  matching,
}: {
  filter: Record<string, string | undefined>;
  matching: number;
}) {
  const [state, formAction] = useActionState(forkFailedPlansAction, IDLE);
  return (
    <form action={formAction} className="stack" data-testid="bulk-fork-form">
      {Object.entries(filter).map(([name, value]) =>
        value ? <input key={name} type="hidden" name={name} value={value} /> : null,
      )}
      {matching > 0 ? (
        <SubmitButton className="button">
          Fork {matching === 1 ? "this plan" : `these ${matching} plans`} from their failed step
        </SubmitButton>
      ) : null}
      <ActionMessage state={state} />
    </form>
  );
}
