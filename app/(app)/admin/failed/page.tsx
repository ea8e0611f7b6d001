import type { Metadata } from "next";
import Link from "next/link";
import {
  FilterForm,
  oneParam,
  Pagination,
  pageHref,
  QueryRefused,
} from "@/app/_components/pagination";
import { StatusBadge } from "@/app/_components/status-badge";
import { Time } from "@/app/_components/time";
import { requireAdmin } from "@/lib/auth/session";
import { isAppError } from "@/lib/plan-engine/app-error";
import {
  FAILED_PAGE_SIZE,
  FORK_FAILED_AT_ONCE,
  FORK_FAILED_BYTES,
} from "@/lib/services/plans/fork-failed-plans";
import { orQueryRefused } from "@/lib/services/shared/pagination";
import { SERVER_STEP_TOOL_NAMES } from "@/lib/services/shared/server-step-tools";
import { views } from "@/lib/web/views";
import { BulkForkForm } from "./bulk-fork-form";

export const metadata: Metadata = { title: "Failed plans" };

type Search = Record<"tool" | "text" | "since" | "until" | "cursor", string | string[] | undefined>;

/**
 * Bulk fork from failure (docs/history-and-forks.md, "Forks from failure"):
 * the team's failed plans that match the filter, and one action that forks
 * each from its failed step.
 */
export default async function FailedPage({
  searchParams,
}: {
  searchParams: Promise<Partial<Search>>;
}) {
  const admin = await requireAdmin();
  const raw = await searchParams;
  const filter = {
    tool: oneParam(raw.tool),
    text: oneParam(raw.text),
    since: oneParam(raw.since),
    until: oneParam(raw.until),
  };
  const cursor = oneParam(raw.cursor);
  const list = await orQueryRefused(views.failedPlans(admin, { filter, cursor }));
  if (isAppError(list)) {
    return (
      <section>
        <h1>Failed plans</h1>
        <QueryRefused
          error={list}
          firstPage={pageHref("/admin/failed", filter)}
          unfiltered="/admin/failed"
        />
      </section>
    );
  }
  return (
    <section>
      <h1>Failed plans</h1>
      <p className="muted">
        Plans of your team that hold a failed step or that a branching condition failed (not
        cancelled ones). Forking one makes a new plan whose steps before the failed step are carried
        with their results, evidence and decisions, and whose failed step and those after it start
        again; the failed plan is not changed. One action forks at most {FORK_FAILED_AT_ONCE} plans,
        the most recently changed first, and fewer large ones (about{" "}
        {FORK_FAILED_BYTES / (1024 * 1024)} MB in all; the same action again forks the next ones); a
        plan already forked from its failed step is not listed again.
      </p>
      <FilterForm label="Filter failed plans">
        <label>
          Failed step run by
          <select name="tool" defaultValue={filter.tool ?? ""}>
            <option value="">Anyone</option>
            <option value="agent">The agent</option>
            {SERVER_STEP_TOOL_NAMES.map((tool) => (
              <option key={tool} value={tool}>
                Cairn: {tool}
              </option>
            ))}
          </select>
        </label>
        <label>
          Text
          <input
            name="text"
            type="search"
            defaultValue={filter.text ?? ""}
            placeholder="Plan name or failure reason"
            maxLength={200}
          />
        </label>
        <label>
          Changed since
          <input name="since" type="date" defaultValue={filter.since ?? ""} />
        </label>
        <label>
          until
          <input name="until" type="date" defaultValue={filter.until ?? ""} />
        </label>
      </FilterForm>
      <p data-testid="failed-count">
        {list.more
          ? `More than ${FORK_FAILED_AT_ONCE} failed plans match; one action forks the first ${FORK_FAILED_AT_ONCE}.`
          : `${list.matching} failed ${list.matching === 1 ? "plan matches" : "plans match"}.`}
      </p>
      <BulkForkForm filter={filter} matching={list.matching} />
      {list.plans.length > 0 ? (
        <div className="table-wrap">
          <table className="table" data-testid="failed-plans">
            <caption className="sr-only">Failed plans, most recently changed first</caption>
            <thead>
              <tr>
                <th scope="col">Plan</th>
                <th scope="col">Status</th>
                <th scope="col">Failed step</th>
                <th scope="col">Last change</th>
              </tr>
            </thead>
            <tbody>
              {list.plans.map((plan) => (
                <tr key={plan.planId} data-testid="failed-plan">
                  <td>
                    <Link href={`/plans/${plan.planId}`}>{plan.name}</Link>
                  </td>
                  <td>
                    <StatusBadge status={plan.status} />
                  </td>
                  <td data-testid="failed-step">
                    Step {plan.stepOrder} ({plan.tool ? `Cairn: ${plan.tool}` : plan.stepType})
                    {plan.reason ? `: ${plan.reason}` : ""}
                  </td>
                  <td>
                    <Time iso={plan.changedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Pagination
        cursor={cursor}
        nextCursor={list.nextCursor}
        basePath="/admin/failed"
        params={filter}
        label="Failed plans pages"
        testId="failed"
      >
        {FAILED_PAGE_SIZE} a page
      </Pagination>
    </section>
  );
}
