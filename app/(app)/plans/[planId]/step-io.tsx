import { fullValueHref, ShortenedText } from "@/app/_components/shortened-text";
import { Time } from "@/app/_components/time";
import type { Shortened } from "@/lib/services/views/full-values";
import type { PlanPage } from "@/lib/services/views/plan-page";

type Step = PlanPage["stepsPage"]["steps"][number];

const BINDING = /(\{\{[^{}]*\}\})/;

/** A server step stored without arguments runs with none. */
const NO_ARGUMENTS: Shortened = { text: "{}", shortened: false, bytes: 2 };

/**
 * A value as indented JSON with each `{{…}}` binding marked, so a reader sees
 * at a glance which parts come from earlier steps or the plan; a long one
 * shortened, with a link to the whole.
 */
function JsonWithBindings({
  shown,
  testId,
  href,
}: {
  shown: Shortened;
  testId: string;
  href: string;
}) {
  // split with a capturing group puts the bindings at the odd indexes.
  const parts = (shown.shortened ? `${shown.text}…` : shown.text).split(BINDING);
  return (
    <>
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
      {shown.shortened ? (
        <p className="muted">
          Shortened here.{" "}
          <a href={href} target="_blank" rel="noopener" data-testid={`${testId}-all`}>
            Show all
          </a>
        </p>
      ) : null}
    </>
  );
}

/**
 * What goes into and comes out of a step besides its instructions: a server
 * step's arguments (as stored, and as Cairn last ran them), an agent step's
 * inputs, and the outputSchema its result must satisfy.
 */
export function StepIo({ step, planId }: { step: Step; planId: string }) {
  const href = (part: "arguments" | "inputs" | "outputSchema") =>
    fullValueHref(planId, { step: step.stepId, part });
  const schema = step.outputSchema ? (
    <details>
      <summary>Output schema</summary>
      <ShortenedText
        value={step.outputSchema}
        href={href("outputSchema")}
        testId="step-output-schema"
        json
      />
    </details>
  ) : null;
  if (!step.tool) {
    return (
      <>
        {step.inputs ? (
          <details>
            <summary>Inputs (with bindings, resolved when the step is handed out)</summary>
            <JsonWithBindings shown={step.inputs} testId="step-inputs" href={href("inputs")} />
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
        <JsonWithBindings
          shown={step.arguments ?? NO_ARGUMENTS}
          testId="step-arguments"
          href={href("arguments")}
        />
      </details>
      {step.ranWith ? (
        <details>
          <summary>
            Arguments Cairn ran it with (<Time iso={step.ranWith.at} />)
          </summary>
          {/* Bindings may have brought whole results in: the audit row has them all. */}
          <ShortenedText
            value={step.ranWith.arguments}
            href={fullValueHref(planId, { audit: step.ranWith.auditId })}
            testId="step-resolved-arguments"
            json
          />
        </details>
      ) : step.status === "pending" ? (
        <p className="muted">Cairn runs it when get_next_step reaches it.</p>
      ) : null}
      {schema}
    </>
  );
}
