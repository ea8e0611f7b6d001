import type { Metadata } from "next";
import Link from "next/link";
import { StatusBadge } from "@/app/_components/status-badge";
import { Time } from "@/app/_components/time";
import { requireAdmin } from "@/lib/auth/session";
import { SKILL_NAMES } from "@/lib/skills";
import { views } from "@/lib/web/views";
import { SatisfactionChart } from "./satisfaction-chart";

export const metadata: Metadata = { title: "Skill runs" };

export default async function SkillsPage() {
  const admin = await requireAdmin();
  const overview = await views.skillRuns(admin);
  return (
    <section>
      <h1>Skill runs</h1>
      <p className="muted">
        How the research skill routed requests and how satisfied people were. Skill files for
        clients that load skills from disk:{" "}
        {SKILL_NAMES.map((name, index) => (
          <span key={name}>
            {index > 0 ? ", " : ""}
            <a href={`/skills/${name}`} download>
              {name}.md
            </a>
          </span>
        ))}
        .
      </p>
      <dl className="stat-row" data-testid="routing-counts">
        <div className="card">
          <dt>Scan</dt>
          <dd>{overview.routing.scan}</dd>
        </div>
        <div className="card">
          <dt>Deep</dt>
          <dd>{overview.routing.deep}</dd>
        </div>
        <div className="card">
          <dt>Not routed</dt>
          <dd>{overview.routing.unrouted}</dd>
        </div>
      </dl>
      <h2>Satisfaction over time</h2>
      <SatisfactionChart points={overview.satisfaction} />
      <h2>Recent runs</h2>
      {overview.recent.length === 0 ? (
        <p className="empty card">
          No skill runs yet: agents record them with log_skill_execution.
        </p>
      ) : (
        <div className="table-wrap">
          <table className="table" data-testid="skill-runs">
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Topic</th>
                <th scope="col">Routing</th>
                <th scope="col">Status</th>
                <th scope="col">Plan</th>
              </tr>
            </thead>
            <tbody>
              {overview.recent.map((run) => (
                <tr key={run.executionId}>
                  <td>
                    <Time iso={run.createdAt} />
                  </td>
                  <td>
                    {run.topic ?? run.skillName}
                    {run.researchType ? (
                      <div className="muted">{run.researchType.replaceAll("_", " ")}</div>
                    ) : null}
                  </td>
                  <td>
                    <strong>{run.delegatedTo ?? "—"}</strong>
                    {run.routingRationale ? (
                      <details>
                        <summary>Why</summary>
                        <p className="pre-wrap">{run.routingRationale}</p>
                      </details>
                    ) : null}
                  </td>
                  <td>
                    <StatusBadge status={run.status} />
                    {run.closedReason ? <div className="muted">{run.closedReason}</div> : null}
                    {run.errorMessage ? (
                      <div className="warning-text">{run.errorMessage}</div>
                    ) : null}
                  </td>
                  <td>
                    {run.planId ? (
                      <Link href={`/plans/${run.planId}`}>{run.planName ?? "Plan"}</Link>
                    ) : (
                      "—"
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
