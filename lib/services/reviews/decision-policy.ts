/**
 * Who may decide the team's checkpoints (docs/reviews.md): people only, or
 * people and the agents that relay a person's answer. The rule itself is the
 * engine's (`checkDecider`, `checkTimeoutAction`); this reads and sets the
 * team's choice, for the admin page, the CLI and the use cases that enforce it.
 * A change is written to the team's trail (team-trail.ts).
 */
import "server-only";
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Database, Executor } from "../../db/client";
import { tenants } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import {
  DECISION_POLICIES,
  DEFAULT_DECISION_POLICY,
  type DecisionPolicy,
} from "../../plan-engine/states";
import type { Actor, ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import { revisitPendingDeadlines } from "./review-deadlines";
import { changeTeamRule } from "./team-trail";

export const decisionPolicyInput = z.strictObject({
  decisionPolicy: z
    .enum(DECISION_POLICIES)
    .describe("people_only: only signed-in people decide; people_and_agents: agents may relay."),
});

/** The team's rules a decision is checked against: who decides, and which connected apps prove a person. */
export type DecisionRules = {
  decisionPolicy: DecisionPolicy;
  /** null: none named (lib/services/reviews/trusted-clients.ts). */
  trustedClients: string[] | null;
};

/**
 * The team's rules, read inside the caller's transaction where it has one,
 * in share mode: a change of the rules (which locks the team's row for update)
 * waits for the decisions made under the old ones, and they for it.
 */
export async function readDecisionRules(db: Executor, tenantId: string): Promise<DecisionRules> {
  const [row] = await db
    .select({ decisionPolicy: tenants.decisionPolicy, trustedClients: tenants.trustedClients })
    .from(tenants)
    .where(eq(tenants.id, tenantId))
    .for("share");
  return {
    decisionPolicy: row?.decisionPolicy ?? DEFAULT_DECISION_POLICY,
    trustedClients: row?.trustedClients ?? null,
  };
}

export async function readDecisionPolicy(db: Executor, tenantId: string): Promise<DecisionPolicy> {
  return (await readDecisionRules(db, tenantId)).decisionPolicy;
}

export function getDecisionPolicy(ctx: ServiceContext): Promise<DecisionPolicy> {
  return readDecisionPolicy(ctx.db, ctx.tenantId);
}

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
