import Link from "next/link";
import { ProgressBar } from "@/app/_components/progress-bar";
import { DecisionPolicyNote } from "@/app/_components/review/decision-channel";
import { StatusBadge } from "@/app/_components/status-badge";
import { Time } from "@/app/_components/time";
import { metadataText } from "@/lib/plan-engine/skill-executions";
import type { PlanPage } from "@/lib/services/views/plan-page";

/** The plan this one was forked from, and its own forks (the newest), each a link. */
function ForkLinks({ plan }: { plan: PlanPage["plan"] }) {
  if (!plan.forkedFrom && plan.forks.length === 0) return null;
  return (
    <dl className="facts" data-testid="fork-links">
      {plan.forkedFrom ? (
        <>
          <dt>Forked from</dt>
          <dd>
            <Link href={`/plans/${plan.forkedFrom.planId}`} data-testid="forked-from">
              {plan.forkedFrom.name ?? "the source plan"}
            </Link>
          </dd>
        </>
      ) : null}
      {plan.forks.length > 0 ? (
        <>
          <dt>Forks</dt>
          <dd>
            <ul className="inline-list">
              {plan.forks.map((fork) => (
                <li key={fork.planId}>
                  <Link href={`/plans/${fork.planId}`} data-testid="fork-link">
                    {fork.name}
                  </Link>{" "}
                  <span className="muted">({fork.status})</span>
                </li>
              ))}
            </ul>
          </dd>
        </>
      ) : null}
    </dl>
  );
}

/** The plan's name, question, status and progress, and how the skill routed it. */
export function PlanHeader({ page }: { page: PlanPage }) {
  const metadata = page.skillExecution?.metadata ?? {};
  return (
    <header className="plan-header">
      <h1>{page.plan.name}</h1>
      <p className="lead">{page.plan.researchQuestion}</p>
      <div className="plan-meta">
        {page.awaitingSteps ? (
          // Executing in name only: nothing moves until the agent adds the steps.
          <span className="badge badge-awaiting_input" data-testid="awaiting-steps">
            Awaiting steps from the agent (after step {page.awaitingSteps.stepOrder})
          </span>
        ) : (
          <StatusBadge status={page.plan.status} />
        )}
        <ProgressBar progress={page.progress} />
        <span className="muted">
          Created <Time iso={page.plan.createdAt} /> · updated <Time iso={page.plan.updatedAt} />
        </span>
      </div>
      <DecisionPolicyNote policy={page.decisionPolicy} />
      <ForkLinks plan={page.plan} />
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
  );
}
