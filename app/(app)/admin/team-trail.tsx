import { Time } from "@/app/_components/time";
import type { TimeoutAction } from "@/lib/plan-engine/review-deadlines";
import type { DeadlinesRevisited } from "@/lib/services/reviews/deadline-revisit";
import type { TeamClient } from "@/lib/services/reviews/trusted-clients";
import { TEAM_TRAIL_LIMIT, type TeamTrailEntry } from "@/lib/services/views/team-rules";

const TIMEOUT_WORDS: Record<TimeoutAction, string> = {
  approve: "approve",
  reject: "reject",
  skip: "skip",
  escalate: "hand to the admins",
};

function clientLabel(clientId: string, names: Map<string, string | null>): string {
  const name = names.get(clientId);
  return name ? `${name} (${clientId})` : clientId;
}

/** What a policy switch did to the team's pending reviews, in words. */
function revisitWords(revisited: DeadlinesRevisited): string {
  const reviews = (n: number) => `${n} pending review${n === 1 ? "" : "s"}`;
  if (revisited.replaced.length === 0) {
    return `${reviews(revisited.pending)} with a deadline revisited; none changed.`;
  }
  const changes = revisited.replaced
    .map((r) => `${TIMEOUT_WORDS[r.from]} → ${TIMEOUT_WORDS[r.to]} on ${reviews(r.reviews)}`)
    .join("; ");
  return `${reviews(revisited.pending)} with a deadline revisited; an agent's deadline action replaced: ${changes}.`;
}

/** One change in words: which rule, what it was, what it became. */
function describe(
  entry: TeamTrailEntry,
  names: Map<string, string | null>,
): { rule: string; from: string; to: string; note?: string | undefined } {
  switch (entry.eventType) {
    case "decision_policy_changed": {
      const words = (policy: string) =>
        policy === "people_only" ? "people only" : "people and agents relaying them";
      return {
        rule: "Who decides checkpoints",
        from: words(entry.from),
        to: words(entry.to),
        note: entry.pendingReviews ? revisitWords(entry.pendingReviews) : undefined,
      };
    }
    case "review_defaults_changed": {
      const words = (defaults: typeof entry.from) =>
        defaults.deadlineSeconds === null || defaults.onTimeout === null
          ? "no deadline"
          : `${Math.round(defaults.deadlineSeconds / 60)} min, then ${TIMEOUT_WORDS[defaults.onTimeout]}`;
      return { rule: "Review deadline", from: words(entry.from), to: words(entry.to) };
    }
    case "trusted_clients_changed": {
      const words = (clientIds: string[] | null) =>
        clientIds === null
          ? "no app named (every connected app, unless only people decide)"
          : clientIds.length === 0
            ? "no app"
            : `only ${clientIds.map((clientId) => clientLabel(clientId, names)).join(", ")}`;
      return { rule: "In-client answers count from", from: words(entry.from), to: words(entry.to) };
    }
    case "review_escalation_changed": {
      const words = (levels: typeof entry.from) =>
        levels === null
          ? "no escalation chain"
          : levels
              .map(
                (level, index) =>
                  `${index + 1}: after ${Math.round(level.afterSeconds / 60)} min (from the ${level.from === "request" || index === 0 ? "request" : "level before"}) to ${level.to.kind === "admins" ? "the admins" : `${level.to.userIds.length} named ${level.to.userIds.length === 1 ? "person" : "people"}`}`,
              )
              .join("; ");
      return { rule: "Escalation chain", from: words(entry.from), to: words(entry.to) };
    }
    case "review_quorum_changed": {
      const words = (n: number) => (n === 1 ? "one person's approval" : `${n} people's approvals`);
      return { rule: "Approvals a review needs", from: words(entry.from), to: words(entry.to) };
    }
  }
}

/** The team's trail (docs/reviews.md): who changed the team's rules, when, from what to what. */
export function TeamTrail({ trail, clients }: { trail: TeamTrailEntry[]; clients: TeamClient[] }) {
  if (trail.length === 0) {
    return (
      <p className="muted" data-testid="team-trail-empty">
        No changes yet: the team still has the rules it started with.
      </p>
    );
  }
  const names = new Map(clients.map((client) => [client.clientId, client.clientName]));
  return (
    <div className="table-wrap">
      <table className="table" data-testid="team-trail">
        <caption className="muted">Newest first; the last {TEAM_TRAIL_LIMIT} changes.</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">Rule</th>
            <th scope="col">From</th>
            <th scope="col">To</th>
          </tr>
        </thead>
        <tbody>
          {trail.map((entry) => {
            const change = describe(entry, names);
            return (
              <tr key={entry.id} data-testid="team-trail-row">
                <td>
                  <Time iso={entry.createdAt.toISOString()} />
                </td>
                <td>{entry.actorLabel}</td>
                <td>{change.rule}</td>
                <td>{change.from}</td>
                <td>
                  {change.to}
                  {change.note ? (
                    <div className="muted" data-testid="team-trail-note">
                      {change.note}
                    </div>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
