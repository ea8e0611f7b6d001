/**
 * The team's rules a decision is checked against (docs/reviews.md): who
 * decides, and which connected apps prove a person. Read by every path to a
 * decision; set by decision-policy.ts and trusted-clients.ts.
 */
import "server-only";
import { eq } from "drizzle-orm";
import type { Executor } from "../../db/client";
import { tenants } from "../../db/schema";
import { DEFAULT_DECISION_POLICY, type DecisionPolicy } from "../../plan-engine/states";
import type { ServiceContext } from "../shared/context";

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
