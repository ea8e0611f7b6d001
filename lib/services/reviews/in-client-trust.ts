/**
 * Who answers a review form shown inside an MCP client: the rule is the
 * engine's (`answersAsPersonInClient`); this reads what it needs of the team,
 * its decision policy and the clients it trusts.
 */
import "server-only";
import { eq } from "drizzle-orm";
import { tenants } from "../../db/schema";
import { answersAsPersonInClient, type DeciderKind } from "../../plan-engine/decisions";
import { DEFAULT_DECISION_POLICY, type DecisionPolicy } from "../../plan-engine/states";
import type { ServiceContext } from "../shared/context";

export type InClientAnswerer = { decisionPolicy: DecisionPolicy; person: boolean };

export async function inClientAnswerer(
  ctx: ServiceContext,
  credential: { kind: DeciderKind; clientId?: string | undefined },
): Promise<InClientAnswerer> {
  const [team] = await ctx.db
    .select({ decisionPolicy: tenants.decisionPolicy, trustedClients: tenants.trustedClients })
    .from(tenants)
    .where(eq(tenants.id, ctx.tenantId));
  return {
    decisionPolicy: team?.decisionPolicy ?? DEFAULT_DECISION_POLICY,
    person: answersAsPersonInClient(credential, team?.trustedClients ?? null),
  };
}
