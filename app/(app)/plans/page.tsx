import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { CancelPlanForm } from "@/app/_components/cancel-plan-form";
import { CursorRefused, oneParam, Pagination, pageHref } from "@/app/_components/pagination";
import { ProgressBar } from "@/app/_components/progress-bar";
import { StatusBadge } from "@/app/_components/status-badge";
import { formatDuration, Time } from "@/app/_components/time";
import { requireUser } from "@/lib/auth/session";
import { isTerminalPlanStatus } from "@/lib/plan-engine/transitions";
import type { SignedInUser } from "@/lib/services/accounts/signed-in-user";
import { isCursorRefused, orCursorRefused } from "@/lib/services/shared/pagination";
import { PLAN_FILTERS, type PlanFilter } from "@/lib/services/views/plans-list";
import { views } from "@/lib/web/views";

export const metadata: Metadata = { title: "Plans" };

const FILTER_LABELS: Record<PlanFilter, string> = {
  active: "Active",
  awaiting_review: "Awaiting review",
  stalled: "Stalled",
  completed: "Completed",
  failed: "Failed",
  cancelled: "Cancelled",
};

type Search = { filter?: string | string[]; q?: string | string[]; cursor?: string | string[] };

export default async function PlansPage({ searchParams }: { searchParams: Promise<Search> }) {
  const user = await requireUser();
  const raw = await searchParams;
  const search = { filter: oneParam(raw.filter), q: oneParam(raw.q), cursor: oneParam(raw.cursor) };
  const filter = PLAN_FILTERS.find((f) => f === search.filter);
  return (
    <section>
      <h1>Plans</h1>
      <search aria-label="Filter plans">
        <form className="filters">
          <label>
            Status
            <select name="filter" defaultValue={filter ?? ""}>
              <option value="">All</option>
              {PLAN_FILTERS.map((f) => (
                <option key={f} value={f}>
                  {FILTER_LABELS[f]}
                </option>
              ))}
            </select>
          </label>
          <label>
            Search
            <input
              name="q"
              type="search"
              defaultValue={search.q ?? ""}
              placeholder="Name or question"
            />
          </label>
          <button type="submit" className="button">
            Apply
          </button>
        </form>
      </search>
      <Suspense
        key={JSON.stringify(search)}
        fallback={
          <p className="muted" role="status">
            Loading plans…
          </p>
        }
      >
        <PlanTable user={user} filter={filter} q={search.q} cursor={search.cursor} />
      </Suspense>
    </section>
  );
}

async function PlanTable({
  user,
  filter,
  q,
  cursor,
}: {
  user: SignedInUser;
  filter?: PlanFilter;
  q?: string;
  cursor?: string;
}) {
  const list = await orCursorRefused(
    views.plans(user, { filter, q: q || undefined, cursor: cursor || undefined }),
  );
  if (isCursorRefused(list)) return <CursorRefused firstPage={pageHref("/plans", { filter, q })} />;
  if (list.plans.length === 0) {
    return (
      <div className="empty card">
        <p>
          {filter || q
            ? "No plan matches these filters."
            : "No plans yet. When an AI platform connected with one of your team's API keys creates a research plan, it appears here."}
        </p>
        {filter || q ? (
          <Link href="/plans">Show all plans</Link>
        ) : (
          <Link href="/connect">How to connect an AI platform</Link>
        )}
      </div>
    );
  }
  return (
    <>
      <div className="table-wrap">
        <table className="table" data-testid="plans-table">
          <caption className="sr-only">Research plans, most recently active first</caption>
          <thead>
            <tr>
              <th scope="col">Plan</th>
              <th scope="col">Status</th>
              <th scope="col">Progress</th>
              <th scope="col">Last activity</th>
              {user.role === "admin" ? <th scope="col">Cancel</th> : null}
            </tr>
          </thead>
          <tbody>
            {list.plans.map((plan) => (
              <tr key={plan.planId}>
                <td>
                  <Link href={`/plans/${plan.planId}`} className="strong">
                    {plan.name}
                  </Link>
                  <div className="muted clamp">{plan.researchQuestion}</div>
                </td>
                <td>
                  <StatusBadge status={plan.status} />
                  {plan.stallWarnings.length > 0 ? (
                    <div className="warning-text" data-testid="stall-warning">
                      ⚠ Step {plan.stallWarnings[0]?.stepOrder} in progress for{" "}
                      {formatDuration(plan.stallWarnings[0]?.inProgressSeconds ?? 0)}, silent for{" "}
                      {formatDuration(plan.stallWarnings[0]?.idleSeconds ?? 0)}
                    </div>
                  ) : null}
                </td>
                <td>
                  <ProgressBar progress={plan.progress} />
                </td>
                <td>
                  <Time iso={plan.lastActivityAt} />
                </td>
                {user.role === "admin" ? (
                  <td>
                    {isTerminalPlanStatus(plan.status) ? null : (
                      <CancelPlanForm planId={plan.planId} planName={plan.name} />
                    )}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pagination
        cursor={list.cursor}
        nextCursor={list.nextCursor}
        basePath="/plans"
        params={{ filter, q }}
        label="Plans pages"
        testId="plans"
      >
        {list.total} plans in all
      </Pagination>
    </>
  );
}
