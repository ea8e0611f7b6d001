import { Pagination } from "@/app/_components/pagination";
import { decisionChannelText } from "@/app/_components/review/decision-channel";
import { fullValueHref, ShortenedText } from "@/app/_components/shortened-text";
import { Time } from "@/app/_components/time";
import { isDecisionChannel } from "@/lib/plan-engine/states";
import { trailFailure, trailSigning } from "@/lib/services/audit/chain-verifier";
import type { PlanPage } from "@/lib/services/views/plan-page";

/**
 * Whether the trail's hash chain and signed head hold (docs/audit.md), how
 * much of it is signed yet, and its export for an
 * auditor. The check is still running in the database while the rest of the
 * page renders; only this paragraph waits for it, within the same response.
 */
async function TrailIntegrity({ page }: { page: PlanPage }) {
  const trail = await page.trail;
  const bad = trailFailure(trail);
  return (
    <p
      className={bad ? "notice notice-error" : "muted"}
      role={bad ? "alert" : undefined}
      data-testid="trail-integrity"
      data-verified={trail.verified}
    >
      {bad
        ? `The audit trail does not verify: ${bad}. The trail was changed outside Cairn after it was written.`
        : `The audit trail verifies: its ${trail.rows} rows form an unbroken hash chain (${trailSigning(trail)}).`}{" "}
      <a href={`/plans/${page.plan.planId}/audit`} download>
        Export the trail with its digests (JSON)
      </a>
    </p>
  );
}

/** How a decision row was made: a person, an agent relaying, or Cairn. */
function decidedHow(entry: PlanPage["audit"]["entries"][number]): string | null {
  if (entry.action !== "decision" || !isDecisionChannel(entry.channel)) return null;
  return decisionChannelText(entry.channel, entry.actorLabel);
}

/** Every event of the plan, newest first, a page at a time (`?audit=`, a cursor). */
export function AuditTrail({ page }: { page: PlanPage }) {
  return (
    <section aria-labelledby="audit-heading">
      <h2 id="audit-heading">Audit trail</h2>
      <TrailIntegrity page={page} />
      <div className="table-wrap">
        <table className="table table-compact" data-testid="audit-trail">
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
                  {entry.action !== null ? ` · ${entry.action}` : ""}
                  {decidedHow(entry) ? (
                    <span className="muted" data-testid="decision-channel">
                      {" "}
                      ({entry.decision} {decidedHow(entry)})
                    </span>
                  ) : null}
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
                    <ShortenedText
                      value={entry.payload}
                      href={fullValueHref(page.plan.planId, { audit: entry.id })}
                      testId="audit-payload"
                      json
                    />
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pagination
        cursor={page.audit.cursor}
        nextCursor={page.audit.nextCursor}
        basePath={`/plans/${page.plan.planId}`}
        params={{}}
        cursorParam="audit"
        label="Audit trail pages"
        testId="audit"
      >
        {page.audit.total} events in all
      </Pagination>
    </section>
  );
}
