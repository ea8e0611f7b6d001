import type { Metadata } from "next";
import Link from "next/link";
import { AutoRefresh } from "@/app/_components/auto-refresh";
import { DecisionPolicyNote, decisionChannelText } from "@/app/_components/review/decision-channel";
import { Time } from "@/app/_components/time";
import { requireUser } from "@/lib/auth/session";
import { INBOX_AGES, type InboxAge } from "@/lib/services/views/review-inbox";
import { views } from "@/lib/web/views";
import { InboxList } from "./inbox-list";

export const metadata: Metadata = { title: "Inbox" };

const AGE_LABELS: Record<InboxAge, string> = {
  "1h": "Waiting over an hour",
  "1d": "Waiting over a day",
  "1w": "Waiting over a week",
};

type Search = { mine?: string; plan?: string; age?: string; after?: string };

/**
 * The team's pending reviews, oldest first, a page at a time (`?after=`, the
 * last review of the previous page; docs/reviews.md), answered here with the
 * same decision service and audit rows as the plan page.
 */
/** Where the list stands among the matching reviews, and the links to the first and the next page. */
function InboxPages({
  total,
  shown,
  first,
  next,
  params,
}: {
  total: number;
  shown: number;
  first: boolean;
  next: string | null;
  params: Record<string, string | undefined>;
}) {
  if (!first && !next) return null;
  const href = (after?: string) => {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries({ ...params, after })) {
      if (value) query.set(key, value);
    }
    const text = query.toString();
    return text ? `/inbox?${text}` : "/inbox";
  };
  return (
    <nav className="pagination" aria-label="Inbox pages" data-testid="inbox-pages">
      {first ? <Link href={href()}>← Oldest</Link> : <span aria-hidden="true" />}
      <span data-testid="inbox-shown">
        {shown} of the {total} pending reviews
      </span>
      {next ? (
        <Link href={href(next)} data-testid="inbox-next">
          Newer →
        </Link>
      ) : (
        <span aria-hidden="true" />
      )}
    </nav>
  );
}

export default async function InboxPage({ searchParams }: { searchParams: Promise<Search> }) {
  const user = await requireUser();
  const search = await searchParams;
  const age = (Object.keys(INBOX_AGES) as InboxAge[]).find((a) => a === search.age);
  const mine = search.mine === "1";
  const filters = { mine, planId: search.plan || undefined, age };
  const [{ inbox, plans, decided, decisionPolicy }, members] = await Promise.all([
    views.inbox(user, { ...filters, after: search.after || undefined }),
    views.teamMembers(user),
  ]);
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
      <search aria-label="Filter reviews">
        <form className="filters">
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
            {filtered ? "No pending review matches these filters." : "Nothing waits for a review."}
          </p>
          {filtered ? <Link href="/inbox">Show every pending review</Link> : null}
        </div>
      ) : null}
      <InboxList reviews={inbox.reviews} members={members} currentUserId={user.userId} />
      <InboxPages
        total={inbox.total}
        shown={inbox.reviews.length}
        first={Boolean(search.after)}
        next={inbox.nextAfter}
        params={{ mine: mine ? "1" : undefined, plan: search.plan || undefined, age }}
      />
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
