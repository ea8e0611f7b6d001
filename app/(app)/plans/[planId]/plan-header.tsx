import { ProgressBar } from "@/app/_components/progress-bar";
import { DecisionPolicyNote } from "@/app/_components/review/decision-channel";
import { StatusBadge } from "@/app/_components/status-badge";
import { Time } from "@/app/_components/time";
import { metadataText } from "@/lib/plan-engine/skill-executions";
import type { PlanPage } from "@/lib/services/views/plan-views";

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
