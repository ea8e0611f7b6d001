/**
 * Whose answer a decision made inside an MCP client is (docs/reviews.md, "What
 * proves a person was there"), for the review form and the review card alike:
 * the rule is the engine's (`answersAsPersonInClient`); this reads what it
 * needs of the team and turns a credential's claim into the decider a
 * decision records: the person's own, or the credential's relay.
 */
import "server-only";
import { answersAsPersonInClient } from "../../plan-engine/decisions";
import type { DecisionPolicy } from "../../plan-engine/states";
import type { Actor, ServiceContext } from "../shared/context";
import { type DecisionRules, readDecisionRules } from "./decision-rules";

export type InClientAnswerer = { decisionPolicy: DecisionPolicy; person: boolean };

function answersAsPerson(actor: Actor, rules: DecisionRules): boolean {
  return (
    actor.credential !== undefined &&
    answersAsPersonInClient({ kind: actor.type, clientId: actor.credential.clientId }, rules)
  );
}

/**
 * The team's rule and whether the calling credential would answer as its
 * person: what a card or a form offers. A decision does not rest on it: its
 * own transaction reads the rules again (`deciderOf`).
 */
export async function inClientAnswerer(ctx: ServiceContext): Promise<InClientAnswerer> {
  const rules = await readDecisionRules(ctx.db, ctx.tenantId);
  return { decisionPolicy: rules.decisionPolicy, person: answersAsPerson(ctx.actor, rules) };
}

/** How long a client's name for itself may be where the trail names it. */
export const MAX_CLIENT_NAME_CHARS = 100;

/**
 * A client's name for itself (the MCP `clientInfo.name`, which any client may
 * set to anything) as the trail may carry it: without control or format
 * characters (a terminal escape, a bidirectional override), spaces collapsed,
 * at most MAX_CLIENT_NAME_CHARS characters. One pass, whatever its length.
 */
export function boundedClientName(name: string): string {
  let out = "";
  let chars = 0;
  let space = false;
  for (const char of name) {
    if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\s]/u.test(char)) {
      space = out.length > 0;
      continue;
    }
    if (space) {
      if (chars + 1 >= MAX_CLIENT_NAME_CHARS) break;
      out += " ";
      chars++;
      space = false;
    }
    out += char;
    chars++;
    if (chars >= MAX_CLIENT_NAME_CHARS) break;
  }
  return out === "" ? "an MCP client" : out;
}

/**
 * The context of a decision the credential says its person made in the MCP
 * client `clientName`: the decision (submit_user_decision's use case) counts
 * it as theirs only where the team's rules, read in its own transaction, say
 * the connection proves a person, and as the credential's relay otherwise.
 */
export function answeringInClient(ctx: ServiceContext, clientName: string): ServiceContext {
  return { ...ctx, actor: { ...ctx.actor, answeringIn: boundedClientName(clientName) } };
}

/**
 * Who decides, on the rules read in the decision's transaction: the
 * credential's person answering in their client (the "client" channel, a
 * person's decision wherever only people decide) where the actor claims so
 * and the connection proves a person; the actor as it came otherwise.
 */
export function deciderOf(actor: Actor, rules: DecisionRules): Actor {
  const clientName = actor.answeringIn;
  const userId = actor.credential?.userId;
  if (clientName === undefined || !userId || !answersAsPerson(actor, rules)) return actor;
  return {
    type: "user",
    id: userId,
    label: `the user of ${actor.label}, answering in the MCP client ${JSON.stringify(clientName)}`,
    inClient: clientName,
  };
}
