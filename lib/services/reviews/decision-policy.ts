/**
 * Who may decide the team's checkpoints (docs/reviews.md): people only, or
 * people and the agents that relay a person's answer. The rule itself is the
 * engine's (`checkDecider`, `checkTimeoutAction`); this sets the team's
 * choice, for the admin page and the CLI (the use cases that enforce it read
 * it with decision-rules.ts). A change is written to the team's trail
 * (team-trail.ts) and revisits the pending deadlines (deadline-revisit.ts).
 */
import "server-only";
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { tenants } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { DECISION_POLICIES, type DecisionPolicy } from "../../plan-engine/states";
import type { Actor, ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import { revisitPendingDeadlines } from "./deadline-revisit";
import { changeTeamRule } from "./team-trail";

export const decisionPolicyInput = z.strictObject({
  decisionPolicy: z
    .enum(DECISION_POLICIES)
    .describe("people_only: only signed-in people decide; people_and_agents: agents may relay."),
});

/**
 * A switch of the policy revisits the team's pending reviews in its own
 * transaction (docs/reviews.md, "Deadlines under a policy switch"); the trail
 * row says how many and which deadline actions it replaced.
 */
function switchPolicy(db: Database, tenantId: string, actor: Actor, to: DecisionPolicy) {
  return changeTeamRule(db, {
    tenantId,
    actor,
    eventType: "decision_policy_changed",
    to,
    effects: async (tx, team) => ({
      pendingReviews: await revisitPendingDeadlines(tx, team.id, {
        decisionPolicy: team.decisionPolicy,
        teamOnTimeout: team.reviewOnTimeout,
      }),
    }),
  });
}

export async function setDecisionPolicy(
  ctx: ServiceContext,
  raw: z.input<typeof decisionPolicyInput>,
): Promise<DecisionPolicy> {
  const input = parseInput(decisionPolicyInput, raw);
  const change = await switchPolicy(ctx.db, ctx.tenantId, ctx.actor, input.decisionPolicy);
  return change.to;
}

/** How the team's trail names a change made with the admin CLI (scripts/cairn.ts). */
export const ADMIN_CLI_ACTOR: Actor = { type: "system", id: null, label: "the admin CLI" };

/**
 * The admin CLI's counterpart, by team name (it has no signed-in context):
 * sets the policy when one is given, and answers the team's policy.
 */
export async function teamDecisionPolicy(
  db: Database,
  teamName: string,
  policy?: DecisionPolicy,
): Promise<DecisionPolicy> {
  const [team] = await db
    .select({ id: tenants.id, decisionPolicy: tenants.decisionPolicy })
    .from(tenants)
    .where(eq(tenants.name, teamName));
  if (!team) throw new AppError("NOT_FOUND", `No team is named "${teamName}".`);
  if (policy === undefined) return team.decisionPolicy;
  const change = await switchPolicy(db, team.id, ADMIN_CLI_ACTOR, policy);
  return change.to;
}
