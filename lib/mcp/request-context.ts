/**
 * From an MCP request to the use cases' ServiceContext: the principal that the
 * route's API-key check put on the request decides the tenant and the audit
 * actor, for tools and resources alike.
 */
import type { Database } from "../db/client";
import type { ApiKeyPrincipal } from "../services/api-key-auth";
import type { LlmConfig, ServiceContext } from "../services/context";

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
  return authInfo?.extra?.principal as ApiKeyPrincipal | undefined;
}

export function serviceContextFor(
  deps: CairnServerDeps,
  db: Database,
  principal: ApiKeyPrincipal,
): ServiceContext {
  return {
    db,
    tenantId: principal.tenantId,
    actor: { type: "api_key", id: principal.apiKeyId, label: principal.label },
    stallThresholdSeconds: deps.stallThresholdSeconds,
    ...(deps.stepLeaseSeconds ? { stepLeaseSeconds: deps.stepLeaseSeconds } : {}),
    llm: deps.llm,
  };
}
