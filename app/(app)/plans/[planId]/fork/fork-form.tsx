"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { IDLE } from "@/lib/web/action-state";
import { forkPlanAction } from "../actions";

type FormStep = {
  stepId: string;
  stepOrder: number;
  stepType: string;
  instructions: string;
  tool: string | null;
  /** A server-run step's arguments as JSON text to edit; null for a step without a tool. */
  argumentsText: string | null;
};

/** The fork's name and the editable steps from the fork point on, posted to fork_plan's use case. */
export function ForkForm({
  planId,
  fromStepId,
  name,
  steps,
}: {
  planId: string;
  fromStepId: string;
  name: string;
  steps: FormStep[];
}) {
  const [state, formAction] = useActionState(forkPlanAction, IDLE);
  return (
    <form action={formAction} className="stack" data-testid="fork-form">
      <input type="hidden" name="planId" value={planId} />
      <input type="hidden" name="fromStepId" value={fromStepId} />
      <label>
        Name of the new plan
        <input name="name" defaultValue={`${name} (fork)`.slice(0, 300)} maxLength={300} />
      </label>
      {steps.map((step) => (
        <fieldset key={step.stepId} data-testid={`fork-step-${step.stepOrder}`}>
          <legend>
            Step {step.stepOrder} ({step.stepType}
            {step.tool ? `, run by Cairn: ${step.tool}` : ""})
          </legend>
          <input type="hidden" name="stepId" value={step.stepId} />
          <label>
            Instructions
            <textarea
              name="instructions"
              defaultValue={step.instructions}
              required
              maxLength={20_000}
              rows={4}
            />
          </label>
          {step.argumentsText !== null ? (
            <label>
              Arguments (JSON)
              <textarea name="arguments" defaultValue={step.argumentsText} rows={4} />
            </label>
          ) : (
            <input type="hidden" name="arguments" value="" />
          )}
        </fieldset>
      ))}
      <SubmitButton className="button">Fork the plan</SubmitButton>
      <ActionMessage state={state} />
    </form>
  );
}
