/**
 * Cairn as its own OAuth 2.1 authorization server for the MCP route
 * (docs/oauth.md): the lifetimes, the one scope, and the addresses (issuer,
 * resource, endpoints) derived from the public origin.
 */
import { env } from "../env";
import { allowedOrigins, isAllowedHost } from "../http/allowed-host";
import { requestScheme } from "../http/request-scheme";

/** One-time codes live a minute: the client exchanges them right after the redirect. */
export const AUTHORIZATION_CODE_LIFETIME_SECONDS = 60;
/** Short-lived access tokens; revocation is immediate anyway (every request reads the grant). */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 3600;
/** Refresh tokens rotate on every use; an unused one lapses after 30 days. */
export const REFRESH_TOKEN_LIFETIME_SECONDS = 30 * 24 * 3600;

/**
 * The one scope: everything the user could do with an API key of theirs over
 * MCP. Cairn's tools are not split by scope, so finer scopes would promise a
 * separation that does not exist.
 */
export const MCP_SCOPE = "mcp";

export const ACCESS_TOKEN_PREFIX = "cairn_at_";
export const REFRESH_TOKEN_PREFIX = "cairn_rt_";

/**
 * Cairn's public origin for a request: CAIRN_PUBLIC_URL when set; otherwise the
 * request's own Host, only if it is loopback or an allowed origin's (so a forged
 * Host cannot make Cairn advertise someone else's endpoints), with the scheme of
 * lib/http/request-scheme.ts (no client's X-Forwarded-Proto makes it https).
 * Undefined when the Host is not allowed.
 */
export function publicOrigin(headers: Pick<Headers, "get">): string | undefined {
  const configured = env().CAIRN_PUBLIC_URL;
  if (configured) return configured;
  const host = headers.get("host");
  if (!host || !isAllowedHost(host, allowedOrigins())) {
    return undefined;
  }
  const scheme = requestScheme(headers.get("x-forwarded-proto"), {
    publicUrl: undefined,
    trustProxy: env().CAIRN_TRUST_PROXY,
  });
  return `${scheme}://${host}`;
}

export type OAuthUrls = {
  issuer: string;
  /** The MCP resource every token is bound to (RFC 8707). */
  resource: string;
  resourceMetadata: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  registrationEndpoint: string;
  revocationEndpoint: string;
};

export function oauthUrls(origin: string): OAuthUrls {
  return {
    issuer: origin,
    resource: `${origin}/api/mcp`,
    resourceMetadata: `${origin}/.well-known/oauth-protected-resource/api/mcp`,
    authorizationEndpoint: `${origin}/authorize`,
    tokenEndpoint: `${origin}/token`,
    registrationEndpoint: `${origin}/register`,
    revocationEndpoint: `${origin}/api/oauth/revoke`,
  };
}

/** RFC 9728 Protected Resource Metadata of /api/mcp. */
export function protectedResourceMetadata(origin: string) {
  const urls = oauthUrls(origin);
  return {
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ["header"],
    resource_name: "Cairn",
  };
}

/** RFC 8414 Authorization Server Metadata (also served as OpenID discovery). */
export function authorizationServerMetadata(origin: string) {
  const urls = oauthUrls(origin);
  return {
    issuer: urls.issuer,
    authorization_endpoint: urls.authorizationEndpoint,
    token_endpoint: urls.tokenEndpoint,
    registration_endpoint: urls.registrationEndpoint,
    revocation_endpoint: urls.revocationEndpoint,
    scopes_supported: [MCP_SCOPE],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    code_challenge_methods_supported: ["S256"],
    client_id_metadata_document_supported: true,
    // Every authorization response carries `iss` (RFC 9207): see withIssuer.
    authorization_response_iss_parameter_supported: true,
  };
}

/** Metadata, token, registration and revocation answer browser-based clients too (the MCP Inspector). */
export const CORS_HEADERS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
  "Access-Control-Allow-Headers": "Content-Type, Authorization, MCP-Protocol-Version",
  "Access-Control-Max-Age": "600",
};

export function corsPreflight(): Response {
  return new Response(null, { status: 204, headers: CORS_HEADERS });
}

export function jsonResponse(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      "Content-Type": "application/json",
      "Cache-Control": "no-store",
      ...CORS_HEADERS,
      ...headers,
    },
  });
}

/** The standard OAuth error body (RFC 6749 §5.2). */
export function oauthError(status: number, error: string, description: string): Response {
  return jsonResponse({ error, error_description: description }, status);
}

/** 400 for a request whose Host is not one of Cairn's addresses. */
export function unknownHost(): Response {
  return oauthError(
    400,
    "invalid_request",
    "This host is not an address of this server (set CAIRN_PUBLIC_URL or CAIRN_ALLOWED_ORIGINS).",
  );
}
