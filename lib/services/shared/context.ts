/**
 * Who is acting, for which tenant, on which database. Both doors build one: the
 * MCP route from the API key, the web UI from the session. Every use case takes
 * it first, so tenancy and the audit actor are never optional.
 */
import "server-only";
import type { Database } from "../../db/client";
import type { ACTOR_TYPES } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";

export type Actor = {
  type: (typeof ACTOR_TYPES)[number];
  /** The API key id or user id; null for the system. */
  id: string | null;
  /** How the audit trail names the actor, e.g. `key "Claude Code" of ada@example.com`. */
  label: string;
  /**
   * A person (`type: "user"`) answering in their own MCP client rather than in
   * Cairn's web UI: the client's name. Their decisions are the "client" channel.
   */
  inClient?: string;
  /**
   * A credential's claim that its person made this decision in the MCP client
   * of this name (a review form, a review card). Whether it is theirs is
   * decided inside the decision's own transaction, on the team's rules as they
   * stand there (`deciderOf` in lib/services/reviews/in-client-trust.ts);
   * otherwise it is the credential's relay.
   */
  answeringIn?: string;
  /**
   * An API key's or connected app's person, and a connected app's OAuth
   * `client_id`: what the rule on whose answer an in-client decision is reads
   * (lib/services/reviews/in-client-trust.ts).
   */
  credential?: { userId: string; clientId?: string | undefined };
};

export type ServiceContext = {
  db: Database;
  tenantId: string;
  actor: Actor;
  /** Seconds a step may stay in progress before the plan counts as stalled. */
  stallThresholdSeconds: number;
  /**
   * Seconds a hand-out of get_next_step holds its step before it is handed out
   * again (CAIRN_STEP_LEASE_SECONDS); unset, the stall threshold.
   */
  stepLeaseSeconds?: number;
  /**
   * The language-model endpoint, from CAIRN_LLM_* (lib/env.ts). Only extract_data
   * reads it, and it reports LLM_NOT_CONFIGURED when a part is missing, so a door
   * that never extracts (the web UI) may leave it out.
   */
  llm?: LlmConfig;
};

export type LlmConfig = {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  model?: string | undefined;
};

/**
 * The signed-in person a use case acts for (their own password, their own
 * e-mail switch, an admin's change to a teammate): the actor of a web door's
 * context. An API key or OAuth app acting is refused, as no door asks for this.
 */
export function actingUserId(ctx: ServiceContext): string {
  if (ctx.actor.type !== "user" || ctx.actor.id === null) {
    throw new AppError("FORBIDDEN", "Only a signed-in person can do this.");
  }
  return ctx.actor.id;
}
