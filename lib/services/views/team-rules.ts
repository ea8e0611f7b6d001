/**
 * Read model for the team's rules on /admin: the trusted clients and the apps
 * to choose them from, and the team's trail of changes (team_audit_log, written
 * by lib/services/reviews/team-trail.ts), newest first. Reads only.
 */
import "server-only";
import { desc, eq } from "drizzle-orm";
import { teamAuditLog } from "../../db/schema";
import { answersAsPersonInClient } from "../../plan-engine/decisions";
import type { DeadlinesRevisited } from "../reviews/deadline-revisit";
import { readDecisionRules } from "../reviews/decision-rules";
import type { TeamEventType, TeamRuleValue } from "../reviews/team-trail";
import { listTeamClients } from "../reviews/trusted-clients";
import type { ServiceContext } from "../shared/context";

/** How many of the newest changes the admin page shows. */
export const TEAM_TRAIL_LIMIT = 50;

export type TeamTrailEntry = {
  [Event in TeamEventType]: {
    id: string;
    eventType: Event;
    actorLabel: string;
    createdAt: Date;
    from: TeamRuleValue<Event>;
    to: TeamRuleValue<Event>;
    /** A policy switch's revisit of the team's pending reviews (none before it was recorded). */
    pendingReviews?: DeadlinesRevisited;
  };
}[TeamEventType];

/** The team's newest changes to its rules, newest first. */
async function listTeamTrail(ctx: ServiceContext): Promise<TeamTrailEntry[]> {
  const rows = await ctx.db
    .select()
    .from(teamAuditLog)
    .where(eq(teamAuditLog.tenantId, ctx.tenantId))
    .orderBy(desc(teamAuditLog.createdAt), desc(teamAuditLog.id))
    .limit(TEAM_TRAIL_LIMIT);
  // The payload was written by changeTeamRule for the row's own event type.
  return rows.map(
    (row) =>
      ({
        id: row.id,
        eventType: row.eventType,
        actorLabel: row.actorLabel,
        createdAt: row.createdAt,
        from: row.payload.from,
        to: row.payload.to,
        ...(row.payload.pendingReviews ? { pendingReviews: row.payload.pendingReviews } : {}),
      }) as TeamTrailEntry,
  );
}

/**
 * What /admin shows of the team's rules besides the policy and the deadline
 * forms: the trusted apps, and each connected app with whether a decision in
 * it (a review card, an in-client form) counts as its person's under the
 * rules in force, by the engine's own rule.
 */
export async function teamRulesView(ctx: ServiceContext) {
  const [rules, clients, trail] = await Promise.all([
    readDecisionRules(ctx.db, ctx.tenantId),
    listTeamClients(ctx.db, ctx.tenantId),
    listTeamTrail(ctx),
  ]);
  const teamClients = clients.map((client) => ({
    ...client,
    countsAsPerson: answersAsPersonInClient(
      { kind: "oauth_app", clientId: client.clientId },
      rules,
    ),
  }));
  return {
    decisionPolicy: rules.decisionPolicy,
    trustedClients: rules.trustedClients,
    teamClients,
    trail,
  };
}
