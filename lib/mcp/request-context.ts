/**
 * From an MCP request to the use cases' ServiceContext: the principal that the
 * route's credential check put on the request decides the tenant and the audit
 * actor, for tools and resources alike.
 */
import type { Database } from "../db/client";
import type { LlmConfig, ServiceContext } from "../services/shared/context";

/**
 * Who an MCP request acts for, whichever credential it carried: an API key, or
 * the OAuth token of a connected app. Both act as their user in their user's
 * tenant; only the audit actor (and the tool-call log) tells them apart.
 */
export type McpPrincipal = {
  kind: "api_key" | "oauth_app";
  /** The API key's id, or the connected app's (OAuth grant's) id. */
  credentialId: string;
  tenantId: string;
  userId: string;
  /** How the audit trail names this caller. */
  label: string;
  /** A connected app's OAuth `client_id`; absent for an API key. */
  clientId?: string;
};

export type CairnServerDeps = {
  getDb(): Promise<Database>;
  stallThresholdSeconds: number;
  /** CAIRN_STEP_LEASE_SECONDS; unset, the stall threshold. */
  stepLeaseSeconds?: number | undefined;
  /** CAIRN_LLM_*, for extract_data; missing parts give LLM_NOT_CONFIGURED there. */
  llm?: LlmConfig;
};

/** The principal that the route's auth wrapper put on the request. */
export function principalOf(authInfo: { extra?: Record<string, unknown> } | undefined) {
  return authInfo?.extra?.principal as McpPrincipal | undefined;
}

export function serviceContextFor(
  deps: CairnServerDeps,
  db: Database,
  principal: McpPrincipal,
): ServiceContext {
  return {
    db,
    tenantId: principal.tenantId,
    actor: {
      type: principal.kind,
      id: principal.credentialId,
      label: principal.label,
      credential: { userId: principal.userId, clientId: principal.clientId },
    },
    stallThresholdSeconds: deps.stallThresholdSeconds,
    ...(deps.stepLeaseSeconds ? { stepLeaseSeconds: deps.stepLeaseSeconds } : {}),
    llm: deps.llm,
  };
}
