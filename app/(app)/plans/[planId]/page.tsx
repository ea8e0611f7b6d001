import type { Metadata } from "next";
import { headers } from "next/headers";
import Link from "next/link";
import { notFound } from "next/navigation";
import { AutoRefresh } from "@/app/_components/auto-refresh";
import { Pagination } from "@/app/_components/pagination";
import { PauseDetails, pauseHeadline } from "@/app/_components/pause-reason";
import { ProgressBar } from "@/app/_components/progress-bar";
import { StatusBadge } from "@/app/_components/status-badge";
import { formatDuration, Time } from "@/app/_components/time";
import { requireUser } from "@/lib/auth/session";
import { splitUserFeedback } from "@/lib/plan-engine/decisions";
import { metadataText } from "@/lib/plan-engine/skill-executions";
import { isTerminalPlanStatus } from "@/lib/plan-engine/transitions";
import type { PlanPage } from "@/lib/services/views/plan-views";
import { views } from "@/lib/web/views";
import { DeliverableView } from "./deliverable-view";
import { PlanFlow, StepTimeline } from "./plan-picture";
import { ReviewArea } from "./review-area";
import { StepIo } from "./step-io";

export const metadata: Metadata = { title: "Plan" };

/** This page's own origin, as the browser sees it: Markdown images from it may be shown. */
async function pageOrigin(): Promise<string | null> {
  const list = await headers();
  const host = list.get("x-forwarded-host") ?? list.get("host");
  if (!host) return null;
  try {
    return new URL(`${list.get("x-forwarded-proto") ?? "http"}://${host}`).origin;
  } catch {
    return null;
  }
}

type Params = { planId: string };
type Search = { audit?: string };

export default async function PlanPageView({
  params,
  searchParams,
}: {
  params: Promise<Params>;
  searchParams: Promise<Search>;
}) {
  const user = await requireUser();
  const { planId } = await params;
  const { audit } = await searchParams;
  const page = await views.planPage(user, planId, Number(audit ?? 1) || 1);
  if (!page) notFound();
  const members = await views.teamMembers(user);

  const active = !isTerminalPlanStatus(page.plan.status);
  const pending = page.reviews.find((r) => r.status === "pending") ?? null;
  const metadata = page.skillExecution?.metadata ?? {};
  // A pause only holds up a plan that can still go on.
  const pause = active ? page.plan.pauseReason : null;

  return (
    <article className="plan">
      {active ? <AutoRefresh /> : null}
      <p>
        <Link href="/plans">← All plans</Link>
      </p>
      <header className="plan-header">
        <h1>{page.plan.name}</h1>
        <p className="lead">{page.plan.researchQuestion}</p>
        <div className="plan-meta">
          <StatusBadge status={page.plan.status} />
          <ProgressBar progress={page.progress} />
          <span className="muted">
            Created <Time iso={page.plan.createdAt} /> · updated <Time iso={page.plan.updatedAt} />
          </span>
        </div>
        {page.skillExecution ? (
          <dl className="facts" data-testid="skill-execution">
            <dt>Research type</dt>
            <dd>{metadataText(metadata, "researchType") || "—"}</dd>
            <dt>Routing</dt>
            <dd>{metadataText(metadata, "delegatedTo") || "—"}</dd>
            <dt>Why</dt>
            <dd className="pre-wrap">{metadataText(metadata, "routingRationale") || "—"}</dd>
          </dl>
        ) : null}
        {page.plan.planDesignRationale ? (
          <details>
            <summary>Plan design rationale</summary>
            <p className="pre-wrap">{page.plan.planDesignRationale}</p>
          </details>
        ) : null}
      </header>

      {pause ? (
        <section
          className="notice notice-warning pause"
          role="status"
          aria-labelledby="pause-heading"
          data-testid="plan-pause"
        >
          <h2 id="pause-heading">
            Paused at <a href={`#step-${pause.stepOrder}`}>step {pause.stepOrder}</a>
          </h2>
          <p className="strong">{pauseHeadline(pause)}</p>
          <PauseDetails reason={pause} />
        </section>
      ) : null}

      {page.stallWarnings.length > 0 ? (
        <p className="notice notice-warning" role="status" data-testid="plan-stall-warning">
          ⚠ Stalled: step {page.stallWarnings.map((w) => w.stepOrder).join(", ")} has been in
          progress longer than the {formatDuration(page.stallThresholdSeconds)} threshold.
        </p>
      ) : null}

      <ReviewArea
        planId={page.plan.planId}
        planStatus={page.plan.status}
        review={
          pending
            ? {
                reviewRequestId: pending.reviewRequestId,
                stepOrder: pending.stepOrder,
                summary: pending.summary,
                questions: pending.questions,
                requestedBy: pending.requestedBy,
                requestedAt: pending.requestedAt,
                dueAt: pending.dueAt,
                onTimeout: pending.onTimeout,
                escalatedAt: pending.escalatedAt,
                assignedUserId: pending.assignedUserId,
                assignedUserLabel: pending.assignedUserId
                  ? (members.find((m) => m.userId === pending.assignedUserId)?.label ??
                    "a former team member")
                  : null,
                assignedRole: pending.assignedRole,
              }
            : null
        }
        currentUserId={user.userId}
        members={members}
      />

      <DeliverableView page={page} origin={await pageOrigin()} />

      <ArtifactList page={page} />

      <section aria-labelledby="steps-heading">
        <h2 id="steps-heading">Steps</h2>
        <ol className="steps">
          {page.steps.map((step) => (
            <StepItem key={step.stepId} step={step} page={page} />
          ))}
        </ol>
      </section>

      <section aria-labelledby="picture-heading" className="two-col">
        <div>
          <h2 id="picture-heading">Flow</h2>
          <PlanFlow
            steps={page.steps}
            conditions={page.branchingConditions}
            bindings={page.bindingEdges}
          />
        </div>
        <div>
          <h2>Timeline</h2>
          <StepTimeline steps={page.steps} now={page.now} />
        </div>
      </section>

      <section aria-labelledby="audit-heading">
        <h2 id="audit-heading">Audit trail</h2>
        <div className="table-wrap">
          <table className="table" data-testid="audit-trail">
            <caption className="sr-only">Every event of this plan, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Actor</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {page.audit.entries.map((entry) => (
                <tr key={entry.id}>
                  <td>
                    <Time iso={entry.createdAt} />
                  </td>
                  <td>
                    <code>{entry.eventType}</code>
                    {typeof entry.payload.action === "string" ? ` · ${entry.payload.action}` : ""}
                  </td>
                  <td>
                    <span className="muted">
                      {entry.actorType === "api_key" || entry.actorType === "oauth_app"
                        ? "API "
                        : entry.actorType === "user"
                          ? "User "
                          : ""}
                    </span>
                    {entry.actorLabel}
                  </td>
                  <td>
                    <details>
                      <summary>Payload</summary>
                      <pre>{JSON.stringify(entry.payload, null, 2)}</pre>
                    </details>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <Pagination
          page={page.audit.page}
          pageSize={page.audit.pageSize}
          total={page.audit.total}
          basePath={`/plans/${page.plan.planId}`}
          params={{}}
          pageParam="audit"
          label="Audit trail pages"
        />
      </section>
    </article>
  );
}

/** The plan's newest artifacts by title and excerpt; the full content is one click away, in the Library. */
function ArtifactList({ page }: { page: PlanPage }) {
  const { total, newest } = page.artifacts;
  const orderOf = new Map(page.steps.map((s) => [s.stepId, s.stepOrder]));
  return (
    <section aria-labelledby="artifacts-heading">
      <h2 id="artifacts-heading">Artifacts</h2>
      {total === 0 ? (
        <p className="muted">None stored yet.</p>
      ) : (
        <>
          <ol className="cards" data-testid="plan-artifacts">
            {newest.map((artifact) => {
              const stepOrder = artifact.stepId ? orderOf.get(artifact.stepId) : undefined;
              return (
                <li key={artifact.artifactId} className="card">
                  <h3 className="hit-title">
                    <Link href={`/library/${artifact.artifactId}`}>{artifact.title}</Link>
                  </h3>
                  <p className="muted">
                    {artifact.artifactType}
                    {stepOrder ? ` · step ${stepOrder}` : ""} · <Time iso={artifact.createdAt} />
                  </p>
                  <p className="clamp">
                    {artifact.excerpt}
                    {artifact.excerptTruncated ? "…" : ""}
                  </p>
                </li>
              );
            })}
          </ol>
          {total > newest.length ? (
            <p className="muted" data-testid="plan-artifacts-more">
              The newest {newest.length} of {total} artifacts; the{" "}
              <Link href="/library">Library</Link> has every one.
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}

function StepItem({ step, page }: { step: PlanPage["steps"][number]; page: PlanPage }) {
  const { original: instructions, feedback } = splitUserFeedback(step.instructions);
  const stall = page.stallWarnings.find((w) => w.stepId === step.stepId);
  const conditions = page.branchingConditions.filter((c) => c.afterStepId === step.stepId);
  const withdrawn = page.reviews.some(
    (r) => r.status === "withdrawn" && r.stepOrder === step.stepOrder,
  );
  const report = (step.stepExecutionReport ?? null) as Record<string, unknown> | null;
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
          <StatusBadge status={step.status} />
        </span>
      </header>
      {stall ? (
        <p className="notice notice-warning" data-testid="step-stall">
          In progress for {formatDuration(stall.inProgressSeconds)} (stall threshold{" "}
          {formatDuration(page.stallThresholdSeconds)}).
        </p>
      ) : null}
      {withdrawn ? (
        <p className="notice" data-testid="review-withdrawn">
          Review withdrawn: the plan ended before anyone answered it.
        </p>
      ) : null}
      <p className="pre-wrap">{instructions}</p>
      {feedback.map((text) => (
        <blockquote key={text} className="feedback" data-testid="user-feedback">
          <strong>User feedback:</strong> <span className="pre-wrap">{text}</span>
        </blockquote>
      ))}
      <dl className="facts">
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
            <dd>{step.failureReason}</dd>
          </>
        ) : null}
      </dl>
      <StepIo step={step} />
      {step.resultSummary ? <p className="summary">{step.resultSummary}</p> : null}
      {step.result !== null ? (
        <details>
          <summary>Result</summary>
          <pre>{JSON.stringify(step.result, null, 2)}</pre>
        </details>
      ) : null}
      {report ? (
        <details>
          <summary>Execution report</summary>
          {(["thinking", "webSearches", "webFetches", "otherToolCalls", "subagents"] as const).map(
            (key) => {
              const value = report[key];
              const empty =
                value === undefined || value === "" || (Array.isArray(value) && value.length === 0);
              return (
                <details key={key} className="nested">
                  <summary>
                    {REPORT_LABELS[key]}
                    {Array.isArray(value) ? ` (${value.length})` : ""}
                  </summary>
                  {empty ? (
                    <p className="muted">None.</p>
                  ) : typeof value === "string" ? (
                    <p className="pre-wrap">{value}</p>
                  ) : (
                    <pre>{JSON.stringify(value, null, 2)}</pre>
                  )}
                </details>
              );
            },
          )}
        </details>
      ) : null}
      {conditions.length > 0 ? (
        <div className="conditions">
          <h4>Branching after this step</h4>
          <ul>
            {conditions.map((condition) => {
              const target =
                typeof condition.actionParams.stepId === "string"
                  ? page.steps.find((s) => s.stepId === condition.actionParams.stepId)?.stepOrder
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
      ) : null}
    </li>
  );
}

const REPORT_LABELS = {
  thinking: "Thinking",
  webSearches: "Web searches",
  webFetches: "Web fetches",
  otherToolCalls: "Other tool calls",
  subagents: "Subagents",
};
