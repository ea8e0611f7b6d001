import Link from "next/link";
import { Pagination } from "@/app/_components/pagination";
import { fullValueHref, ShortenedText } from "@/app/_components/shortened-text";
import { StatusBadge } from "@/app/_components/status-badge";
import { formatDuration, Time } from "@/app/_components/time";
import { type PlanPage, REPORT_PARTS } from "@/lib/services/views/plan-page";
import { StepIo } from "./step-io";

type Step = PlanPage["steps"][number];
type ShownStep = PlanPage["stepsPage"]["steps"][number];
type Condition = PlanPage["branchingConditions"][number];

/**
 * The steps in order, a page at a time (getPlanPage's `stepsPage`: what 200
 * steps at their limits show would be megabytes), each with what it did and
 * the conditions evaluated after it.
 */
export function StepsSection({ page }: { page: PlanPage }) {
  const { steps, cursor, nextCursor } = page.stepsPage;
  return (
    <section aria-labelledby="steps-heading">
      <h2 id="steps-heading">Steps</h2>
      <Pagination
        cursor={cursor}
        nextCursor={nextCursor}
        basePath={`/plans/${page.plan.planId}`}
        params={{}}
        cursorParam="steps"
        linkNames={{ first: "← First steps", next: "Later steps →" }}
        label="Steps pages"
        testId="steps"
      >
        Steps {steps[0]?.stepOrder ?? 0}–{steps.at(-1)?.stepOrder ?? 0} of {page.steps.length}
      </Pagination>
      <ol className="steps">
        {steps.map((step) => (
          <StepItem key={step.stepId} step={step} page={page} />
        ))}
      </ol>
    </section>
  );
}

function StepItem({ step, page }: { step: ShownStep; page: PlanPage }) {
  const [instructions, ...feedback] = step.instructions;
  const instructionsHref = fullValueHref(page.plan.planId, {
    step: step.stepId,
    part: "instructions",
  });
  const stall = page.stallWarnings.find((w) => w.stepId === step.stepId);
  const conditions = page.branchingConditions.filter((c) => c.afterStepId === step.stepId);
  const duration =
    step.startedAt && step.completedAt
      ? (Date.parse(step.completedAt) - Date.parse(step.startedAt)) / 1000
      : null;
  return (
    <li
      id={`step-${step.stepOrder}`}
      className={`card step step-${step.status}`}
      data-testid={`step-${step.stepOrder}`}
    >
      <header className="step-header">
        <h3>
          {step.stepOrder}. <span className="step-type">{step.stepType}</span>
        </h3>
        <span className="badges">
          {step.tool ? (
            <span className="badge badge-server" data-testid="server-step">
              Run by Cairn: {step.tool}
            </span>
          ) : null}
          {step.sentBack ? (
            <span className="badge badge-pending" data-testid="status">
              Sent back
            </span>
          ) : (
            <StatusBadge status={step.status} />
          )}
          {step.carriedFromStepId ? (
            <span className="badge" data-testid="step-carried">
              Carried from the source plan
            </span>
          ) : null}
          <Link
            href={`/plans/${page.plan.planId}/fork?step=${step.stepId}`}
            data-testid="fork-from-here"
          >
            Fork from here
          </Link>
        </span>
      </header>
      {step.sentBack ? (
        <p className="notice" data-testid="step-sent-back">
          Sent back with feedback: waiting for the agent to pick it up again.
        </p>
      ) : null}
      {stall ? (
        <p className="notice notice-warning" data-testid="step-stall">
          In progress for {formatDuration(stall.inProgressSeconds)}; its holder last renewed it{" "}
          {formatDuration(stall.idleSeconds)} ago (stall threshold{" "}
          {formatDuration(page.stallThresholdSeconds)}).
        </p>
      ) : null}
      {step.reviewWithdrawn ? (
        <p className="notice" data-testid="review-withdrawn">
          Review withdrawn: the plan ended before anyone answered it.
        </p>
      ) : null}
      <ShortenedText value={instructions} href={instructionsHref} testId="step-instructions" />
      {feedback.map((shown, index) => {
        // Each modify appends a person's feedback (up to 20,000 characters, 20 reviews a step).
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: feedback is only ever appended
          <blockquote key={index} className="feedback" data-testid="user-feedback">
            <strong>User feedback:</strong>{" "}
            <span className="pre-wrap">{shown.shortened ? `${shown.text}…` : shown.text}</span>
            {shown.shortened ? (
              <>
                {" "}
                <a href={instructionsHref} target="_blank" rel="noopener">
                  Show all
                </a>
              </>
            ) : null}
          </blockquote>
        );
      })}
      <dl className="facts facts-inline">
        <dt>Started</dt>
        <dd>
          <Time iso={step.startedAt} />
        </dd>
        <dt>Finished</dt>
        <dd>
          <Time iso={step.completedAt} />
          {duration !== null ? ` (${formatDuration(duration)})` : ""}
        </dd>
        <dt>Confidence</dt>
        <dd>{step.confidence === null ? "—" : step.confidence.toFixed(2)}</dd>
        {step.failureReason ? (
          <>
            <dt>Failure</dt>
            <dd>
              {/* A rejection's reason carries the reviewer's feedback: up to 20,000 characters. */}
              <ShortenedText
                value={step.failureReason}
                href={fullValueHref(page.plan.planId, { step: step.stepId, part: "failureReason" })}
                testId="step-failure"
              />
            </dd>
          </>
        ) : null}
      </dl>
      {step.resultSummary ? (
        <div className="summary">
          <ShortenedText
            value={step.resultSummary}
            href={fullValueHref(page.plan.planId, { step: step.stepId, part: "resultSummary" })}
            testId="step-summary"
          />
        </div>
      ) : null}
      {/* The foldouts side by side on one line while closed: a plan's page stays short. */}
      <div className="step-more">
        <StepIo step={step} planId={page.plan.planId} />
        {step.result !== null ? (
          <details>
            <summary>Result</summary>
            <ShortenedText
              value={step.result}
              href={fullValueHref(page.plan.planId, { step: step.stepId, part: "result" })}
              testId="step-result"
              json
            />
          </details>
        ) : null}
        {step.report ? (
          <ExecutionReport
            report={step.report}
            href={fullValueHref(page.plan.planId, { step: step.stepId, part: "report" })}
          />
        ) : null}
      </div>
      {conditions.length > 0 ? <StepConditions conditions={conditions} steps={page.steps} /> : null}
    </li>
  );
}

/** What the agent reported doing for the step, one foldout per kind of work, each shortened. */
function ExecutionReport({
  report,
  href,
}: {
  report: NonNullable<ShownStep["report"]>;
  href: string;
}) {
  return (
    <details>
      <summary>Execution report</summary>
      {REPORT_PARTS.map((key) => {
        const part = report[key];
        return (
          <details key={key} className="nested">
            <summary>
              {REPORT_LABELS[key]}
              {part?.count != null ? ` (${part.count})` : ""}
            </summary>
            {!part || part.empty ? (
              <p className="muted">None.</p>
            ) : (
              <ShortenedText
                value={part.value}
                href={href}
                testId={`report-${key}`}
                json={!part.isText}
              />
            )}
          </details>
        );
      })}
    </details>
  );
}

/** The step's branching conditions, whether each fired and where a skip_to leads. */
function StepConditions({ conditions, steps }: { conditions: Condition[]; steps: Step[] }) {
  return (
    <div className="conditions">
      <h4>Branching after this step</h4>
      <ul>
        {conditions.map((condition) => {
          const target =
            typeof condition.actionParams.stepId === "string"
              ? steps.find((s) => s.stepId === condition.actionParams.stepId)?.stepOrder
              : undefined;
          return (
            <li key={condition.conditionId} data-testid="condition">
              If <code>{condition.conditionExpression}</code> then{" "}
              <strong>{condition.ifTrueAction}</strong>
              {target ? ` step ${target}` : ""} —{" "}
              {condition.fired === null ? (
                <span className="muted">not evaluated yet</span>
              ) : condition.fired ? (
                <span className="strong">fired</span>
              ) : (
                <span>did not fire</span>
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

const REPORT_LABELS = {
  thinking: "Thinking",
  webSearches: "Web searches",
  webFetches: "Web fetches",
  otherToolCalls: "Other tool calls",
  subagents: "Subagents",
};
