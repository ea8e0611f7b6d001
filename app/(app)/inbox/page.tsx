import type { Metadata } from "next";
import Link from "next/link";
import { AutoRefresh } from "@/app/_components/auto-refresh";
import { CursorRefused, oneParam, Pagination, pageHref } from "@/app/_components/pagination";
import { DecisionPolicyNote, decisionChannelText } from "@/app/_components/review/decision-channel";
import { Time } from "@/app/_components/time";
import { requireUser } from "@/lib/auth/session";
import { isCursorRefused, orCursorRefused } from "@/lib/services/shared/pagination";
import { INBOX_AGES, type InboxAge } from "@/lib/services/views/review-inbox";
import { views } from "@/lib/web/views";
import { InboxList } from "./inbox-list";

export const metadata: Metadata = { title: "Inbox" };

const AGE_LABELS: Record<InboxAge, string> = {
  "1h": "Waiting over an hour",
  "1d": "Waiting over a day",
  "1w": "Waiting over a week",
};

type Search = {
  mine?: string | string[];
  plan?: string | string[];
  age?: string | string[];
  snoozed?: string | string[];
  cursor?: string | string[];
};

/**
 * The team's pending reviews, oldest first, a page at a time (`?cursor=`, where
 * the previous page ended; docs/reviews.md), answered here with the
 * same decision service and audit rows as the plan page.
 */
export default async function InboxPage({ searchParams }: { searchParams: Promise<Search> }) {
  const user = await requireUser();
  const raw = await searchParams;
  const search = {
    mine: oneParam(raw.mine),
    plan: oneParam(raw.plan),
    age: oneParam(raw.age),
    snoozed: oneParam(raw.snoozed),
    cursor: oneParam(raw.cursor),
  };
  const age = (Object.keys(INBOX_AGES) as InboxAge[]).find((a) => a === search.age);
  const mine = search.mine === "1";
  // The reviews the user snoozed, which the inbox otherwise leaves out (docs/reviews.md, "Snooze").
  const snoozedView = search.snoozed === "1";
  const filters = { mine, planId: search.plan || undefined, age, snoozed: snoozedView };
  const [answer, members] = await Promise.all([
    orCursorRefused(views.inbox(user, { ...filters, cursor: search.cursor || undefined })),
    views.teamMembers(user),
  ]);
  const params = {
    mine: mine ? "1" : undefined,
    plan: search.plan || undefined,
    age,
    snoozed: snoozedView ? "1" : undefined,
  };
  if (isCursorRefused(answer)) {
    return (
      <section>
        <h1>Inbox</h1>
        <CursorRefused firstPage={pageHref("/inbox", params)} />
      </section>
    );
  }
  const { inbox, plans, decided, decisionPolicy, snoozed, snoozedUntil } = answer;
  const filtered = mine || Boolean(search.plan) || Boolean(age);
  return (
    <section>
      <AutoRefresh />
      <h1>Inbox</h1>
      <p className="lead">
        Reviews the agents are waiting on, oldest first. Anyone in the team may answer; the audit
        trail names who did.
      </p>
      <DecisionPolicyNote policy={decisionPolicy} />
      <nav aria-label="Inbox views" className="filters">
        {snoozedView ? (
          <Link href={pageHref("/inbox", { ...params, snoozed: undefined })}>← Inbox</Link>
        ) : (
          <Link href={pageHref("/inbox", { ...params, snoozed: "1" })} data-testid="snoozed-view">
            Snoozed ({snoozed})
          </Link>
        )}
      </nav>
      <search aria-label="Filter reviews">
        <form className="filters">
          {snoozedView ? <input type="hidden" name="snoozed" value="1" /> : null}
          <label>
            <input type="checkbox" name="mine" value="1" defaultChecked={mine} /> Assigned to me
          </label>
          <label>
            Plan
            <select name="plan" defaultValue={search.plan ?? ""}>
              <option value="">All plans</option>
              {plans.map((plan) => (
                <option key={plan.planId} value={plan.planId}>
                  {plan.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Age
            <select name="age" defaultValue={age ?? ""}>
              <option value="">Any</option>
              {(Object.keys(AGE_LABELS) as InboxAge[]).map((a) => (
                <option key={a} value={a}>
                  {AGE_LABELS[a]}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" className="button">
            Apply
          </button>
        </form>
      </search>
      {inbox.reviews.length === 0 ? (
        <div className="empty card" data-testid="inbox-empty">
          <p>
            {snoozedView
              ? "You have no snoozed review that matches."
              : filtered
                ? "No pending review matches these filters."
                : "Nothing waits for a review."}
          </p>
          {filtered || snoozedView ? <Link href="/inbox">Show every pending review</Link> : null}
        </div>
      ) : null}
      <InboxList
        reviews={inbox.reviews}
        members={members}
        currentUserId={user.userId}
        snoozedUntil={snoozedUntil}
      />
      <Pagination
        cursor={search.cursor}
        nextCursor={inbox.nextCursor}
        basePath="/inbox"
        params={params}
        newestFirst={false}
        label="Inbox pages"
        testId="inbox"
      >
        {inbox.reviews.length} of the {inbox.total} {snoozedView ? "snoozed" : "pending"} reviews
      </Pagination>
      {decided.length > 0 ? (
        <section aria-labelledby="decided-heading">
          <h2 id="decided-heading">Recently decided</h2>
          <ul data-testid="recent-decisions">
            {decided.map((d) => (
              <li key={d.reviewRequestId} data-channel={d.channel}>
                <Link href={`/plans/${d.planId}`}>{d.planName}</Link>, step {d.stepOrder}:{" "}
                <strong>{d.decision}</strong> {decisionChannelText(d.channel, d.decidedBy)},{" "}
                <Time iso={d.decidedAt} />
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </section>
  );
}
