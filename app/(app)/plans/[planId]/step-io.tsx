import { Time } from "@/app/_components/time";
import type { PlanPage } from "@/lib/services/views/plan-views";

type Step = PlanPage["steps"][number];

const BINDING = /(\{\{[^{}]*\}\})/;

/**
 * A value as indented JSON with each `{{…}}` binding marked, so a reader sees
 * at a glance which parts come from earlier steps or the plan.
 */
function JsonWithBindings({ value, testId }: { value: unknown; testId: string }) {
  // split with a capturing group puts the bindings at the odd indexes.
  const parts = JSON.stringify(value, null, 2).split(BINDING);
  return (
    <pre data-testid={testId}>
      {parts.map((part, index) =>
        index % 2 === 1 ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts never move, and one binding may repeat
          <mark key={index} className="binding">
            {part}
          </mark>
        ) : (
          part
        ),
      )}
    </pre>
  );
}

/**
 * What goes into and comes out of a step besides its instructions: a server
 * step's arguments (as stored, and as Cairn last ran them), an agent step's
 * inputs, and the outputSchema its result must satisfy.
 */
export function StepIo({ step }: { step: Step }) {
  const schema = step.outputSchema ? (
    <details>
      <summary>Output schema</summary>
      <pre data-testid="step-output-schema">{JSON.stringify(step.outputSchema, null, 2)}</pre>
    </details>
  ) : null;
  if (!step.tool) {
    return (
      <>
        {step.inputs ? (
          <details>
            <summary>Inputs (with bindings, resolved when the step is handed out)</summary>
            <JsonWithBindings value={step.inputs} testId="step-inputs" />
          </details>
        ) : null}
        {schema}
      </>
    );
  }
  return (
    <>
      <details>
        <summary>Arguments (as written in the plan, with bindings)</summary>
        <JsonWithBindings value={step.arguments ?? {}} testId="step-arguments" />
      </details>
      {step.ranWith ? (
        <details>
          <summary>
            Arguments Cairn ran it with (<Time iso={step.ranWith.at} />)
          </summary>
          <pre data-testid="step-resolved-arguments">
            {JSON.stringify(step.ranWith.arguments, null, 2)}
          </pre>
        </details>
      ) : step.status === "pending" ? (
        <p className="muted">Cairn runs it when get_next_step reaches it.</p>
      ) : null}
      {schema}
    </>
  );
}
