"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import type { DecisionPolicy } from "@/lib/plan-engine/states";
import { IDLE } from "@/lib/web/action-state";
import { setDecisionPolicyAction } from "./decision-policy-actions";

/** Who may decide a checkpoint: people only, or people and the agents relaying them. */
export function DecisionPolicyForm({ policy }: { policy: DecisionPolicy }) {
  const [state, action] = useActionState(setDecisionPolicyAction, IDLE);
  return (
    <form action={action} className="form" data-testid="decision-policy-form">
      <fieldset>
        <legend>Who may approve, reject, modify or skip a checkpoint</legend>
        <label>
          <input
            type="radio"
            name="decisionPolicy"
            value="people_only"
            defaultChecked={policy === "people_only"}
          />{" "}
          People only: a person signed in to Cairn (the plan page, the inbox, or a link from an
          e-mail or webhook). An agent's decision, and an agent's deadline that would approve or
          skip, are refused.
        </label>
        <label>
          <input
            type="radio"
            name="decisionPolicy"
            value="people_and_agents"
            defaultChecked={policy === "people_and_agents"}
          />{" "}
          People, and agents relaying a person's answer from their chat (API keys and connected
          apps). Relayed decisions are marked as such.
        </label>
      </fieldset>
      <ActionMessage state={state} />
      <SubmitButton className="button button-primary">Save who decides</SubmitButton>
    </form>
  );
}
