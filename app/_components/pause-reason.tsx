import type { PauseKind, PauseReason } from "@/lib/plan-engine/bindings";

/** Each kind of pause in the words a reader of the page uses. */
const KIND_WORDS: Record<PauseKind, string> = {
  unresolvable_params: "a value it reads from an earlier step is not there",
  schema_mismatch: "its arguments or its result do not fit what the step expects",
  tool_error: "the tool failed",
  unresolved_dependency: "a step it depends on failed or was skipped",
};

/** One line naming the step and why it stopped. */
export function pauseHeadline(reason: PauseReason): string {
  return `Cairn could not run step ${reason.stepOrder} (${reason.tool}): ${KIND_WORDS[reason.type]}.`;
}

/**
 * Why a plan's server-run steps stopped and the call that unblocks it: the
 * message, what is missing or wrong, and the suggested tool with its arguments
 * as JSON, as get_next_step gives them to the agent.
 */
export function PauseDetails({ reason }: { reason: PauseReason }) {
  return (
    <>
      <p className="pre-wrap" data-testid="pause-message">
        {reason.message}
      </p>
      <dl className="facts">
        {reason.missing && reason.missing.length > 0 ? (
          <>
            <dt>Missing</dt>
            <dd>
              {reason.missing.map((binding, index) => (
                <span key={binding}>
                  {index > 0 ? ", " : ""}
                  <code>{binding}</code>
                </span>
              ))}
            </dd>
          </>
        ) : null}
        {reason.producingStepOrder !== undefined ? (
          <>
            <dt>Depends on</dt>
            <dd>Step {reason.producingStepOrder}</dd>
          </>
        ) : null}
        {reason.issues && reason.issues.length > 0 ? (
          <>
            <dt>Does not fit</dt>
            <dd>
              <ul className="plain compact">
                {reason.issues.map((issue) => (
                  <li key={`${issue.path}:${issue.message}`}>
                    <code>{issue.path}</code>: {issue.message}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        ) : null}
        {reason.errorCode ? (
          <>
            <dt>Error</dt>
            <dd>
              <code>{reason.errorCode}</code>
              {reason.retryable === undefined
                ? ""
                : reason.retryable
                  ? " (calling again may help)"
                  : " (calling again will fail the same way)"}
            </dd>
          </>
        ) : null}
      </dl>
      <p>
        The call that unblocks the plan (the agent receives it from <code>get_next_step</code>):{" "}
        <code data-testid="pause-tool">{reason.suggestedTool.name}</code> with
      </p>
      <pre data-testid="pause-arguments">
        {JSON.stringify(reason.suggestedTool.arguments, null, 2)}
      </pre>
    </>
  );
}
