/**
 * Whose answer a decision made inside an MCP client is (docs/reviews.md, "What
 * proves a person was there"), for the review form and the review card alike:
 * the rule is the engine's (`answersAsPersonInClient`); this reads what it
 * needs of the team, and records the decision as the person's own or as the
 * credential's relay.
 */
import "server-only";
import { eq } from "drizzle-orm";
import type { z } from "zod";
import { tenants } from "../../db/schema";
import { answersAsPersonInClient } from "../../plan-engine/decisions";
import { DEFAULT_DECISION_POLICY, type DecisionPolicy } from "../../plan-engine/states";
import {
  submitUserDecision,
  type submitUserDecisionInput,
  type UserDecisionResult,
} from "../plans/submit-user-decision";
import type { ServiceContext } from "../shared/context";

export type InClientAnswerer = { decisionPolicy: DecisionPolicy; person: boolean };

/** The team's rule and whether the calling credential answers as its person. */
export async function inClientAnswerer(ctx: ServiceContext): Promise<InClientAnswerer> {
  const [team] = await ctx.db
    .select({ decisionPolicy: tenants.decisionPolicy, trustedClients: tenants.trustedClients })
    .from(tenants)
    .where(eq(tenants.id, ctx.tenantId));
  const credential = { kind: ctx.actor.type, clientId: ctx.actor.credential?.clientId };
  return {
    decisionPolicy: team?.decisionPolicy ?? DEFAULT_DECISION_POLICY,
    person:
      ctx.actor.credential !== undefined &&
      answersAsPersonInClient(credential, team?.trustedClients ?? null),
  };
}

/**
 * The context of a decision the credential's person made in their client: a
 * person's decision (the team's "people only" lets it through), recorded as
 * made in that client (the "client" channel).
 */
function personInClient(ctx: ServiceContext, clientName: string): ServiceContext {
  const userId = ctx.actor.credential?.userId;
  if (!userId) throw new Error("personInClient needs a credential's person");
  return {
    ...ctx,
    actor: {
      type: "user",
      id: userId,
      label: `the user of ${ctx.actor.label}, answering in the MCP client "${clientName}"`,
      inClient: clientName,
    },
  };
}

/**
 * A decision made in the MCP client `clientName`, through submit_user_decision's
 * use case: the person's own where the connection proves one (`person`), else
 * the credential's relay, which the team's rule may refuse (FORBIDDEN, with the
 * review page's link, where only people decide).
 */
export function decideInClient(
  ctx: ServiceContext,
  answerer: Pick<InClientAnswerer, "person">,
  clientName: string,
  input: z.input<typeof submitUserDecisionInput>,
): Promise<UserDecisionResult> {
  return submitUserDecision(answerer.person ? personInClient(ctx, clientName) : ctx, input);
}
