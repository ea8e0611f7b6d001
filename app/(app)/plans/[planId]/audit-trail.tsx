import { Pagination } from "@/app/_components/pagination";
import { Time } from "@/app/_components/time";
import type { PlanPage } from "@/lib/services/views/plan-views";

/** Every event of the plan, newest first, a page at a time (`?audit=`). */
export function AuditTrail({ page }: { page: PlanPage }) {
  return (
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
  );
}
