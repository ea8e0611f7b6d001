import type { Metadata } from "next";
import { FilterForm, Pagination, pageHref, QueryRefused } from "@/app/_components/pagination";
import { Time } from "@/app/_components/time";
import { requireAdmin } from "@/lib/auth/session";
import { isAppError } from "@/lib/plan-engine/app-error";
import { orQueryRefused } from "@/lib/services/shared/pagination";
import { views } from "@/lib/web/views";

export const metadata: Metadata = { title: "Tool calls" };

type Search = {
  tool?: string;
  key?: string;
  errors?: string;
  since?: string;
  until?: string;
  cursor?: string;
};

type ToolCallLog = Awaited<ReturnType<typeof views.toolCalls>>;
type ApiKeyOption = Awaited<ReturnType<typeof views.apiKeys>>[number];

export default async function ToolCallsPage({ searchParams }: { searchParams: Promise<Search> }) {
  const admin = await requireAdmin();
  const search = await searchParams;
  const keys = await views.apiKeys(admin);
  const log = await orQueryRefused(
    views.toolCalls(admin, {
      tool: search.tool || undefined,
      apiKeyId: search.key || undefined,
      errors: search.errors === "only" || search.errors === "none" ? search.errors : undefined,
      since: search.since || undefined,
      until: search.until || undefined,
      cursor: search.cursor || undefined,
    }),
  );
  const filters = {
    tool: search.tool,
    key: search.key,
    errors: search.errors,
    since: search.since,
    until: search.until,
  };
  return (
    <section>
      <h1>Tool calls</h1>
      <ToolCallFilters
        search={search}
        toolNames={isAppError(log) ? [] : log.toolNames}
        keys={keys}
      />
      {isAppError(log) ? (
        <QueryRefused
          error={log}
          firstPage={pageHref("/admin/tool-calls", filters)}
          unfiltered="/admin/tool-calls"
        />
      ) : (
        <>
          <h2>Per tool</h2>
          <PerToolStats stats={log.stats} />
          <h2>Calls</h2>
          <CallsTable calls={log.calls} />
          <Pagination
            cursor={log.filters.cursor}
            nextCursor={log.nextCursor}
            basePath="/admin/tool-calls"
            params={filters}
            label="Tool call pages"
            testId="tool-calls"
          >
            {log.total} calls in all
          </Pagination>
        </>
      )}
    </section>
  );
}

/** The filter form: a GET to this page, so a filtered view is a link. */
function ToolCallFilters({
  search,
  toolNames,
  keys,
}: {
  search: Search;
  toolNames: readonly string[];
  keys: readonly ApiKeyOption[];
}) {
  return (
    <FilterForm label="Filter tool calls">
      <label>
        Tool
        <select name="tool" defaultValue={search.tool ?? ""}>
          <option value="">All</option>
          {toolNames.map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
      </label>
      <label>
        Key
        <select name="key" defaultValue={search.key ?? ""}>
          <option value="">All</option>
          {keys.map((key) => (
            <option key={key.apiKeyId} value={key.apiKeyId}>
              {key.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Errors
        <select name="errors" defaultValue={search.errors ?? ""}>
          <option value="">All calls</option>
          <option value="only">Errors only</option>
          <option value="none">Successes only</option>
        </select>
      </label>
      <label>
        From
        <input type="datetime-local" name="since" defaultValue={search.since ?? ""} />
      </label>
      <label>
        To
        <input type="datetime-local" name="until" defaultValue={search.until ?? ""} />
      </label>
    </FilterForm>
  );
}

/** Calls, error rate and latency percentiles of each tool, over the filtered calls. */
function PerToolStats({ stats }: { stats: ToolCallLog["stats"] }) {
  if (stats.length === 0) {
    return (
      <p className="empty card">
        No tool calls match. Calls appear here once an AI platform uses one of your keys.
      </p>
    );
  }
  return (
    <div className="table-wrap">
      <table className="table" data-testid="tool-stats">
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col">Calls</th>
            <th scope="col">Error rate</th>
            <th scope="col">p50 ms</th>
            <th scope="col">p95 ms</th>
            <th scope="col">p99 ms</th>
          </tr>
        </thead>
        <tbody>
          {stats.map((row) => (
            <tr key={row.toolName}>
              <td>
                <code>{row.toolName}</code>
              </td>
              <td>{row.calls}</td>
              <td>{(row.errorRate * 100).toFixed(1)}%</td>
              <td>{row.p50.toFixed(1)}</td>
              <td>{row.p95.toFixed(1)}</td>
              <td>{row.p99.toFixed(1)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One row a call, newest first: when, which tool and key, its outcome, duration and sizes. */
function CallsTable({ calls }: { calls: ToolCallLog["calls"] }) {
  return (
    <div className="table-wrap">
      <table className="table" data-testid="tool-calls">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Tool</th>
            <th scope="col">Key</th>
            <th scope="col">Result</th>
            <th scope="col">Duration</th>
            <th scope="col">Sizes</th>
          </tr>
        </thead>
        <tbody>
          {calls.map((call) => (
            <tr key={call.id}>
              <td>
                <Time iso={call.createdAt} />
              </td>
              <td>
                <code>{call.toolName}</code>
              </td>
              <td>{call.keyName ?? "—"}</td>
              <td>
                {call.isError ? (
                  <>
                    <span className="warning-text">{call.errorCode ?? "error"}</span>
                    {call.errorMessage ? (
                      <span className="muted" data-testid="tool-call-error">
                        {" "}
                        {call.errorMessage}
                      </span>
                    ) : null}
                  </>
                ) : (
                  "ok"
                )}
              </td>
              <td>{call.durationMs.toFixed(1)} ms</td>
              <td className="muted">
                {call.requestBytes} B in · {call.responseBytes} B out
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
