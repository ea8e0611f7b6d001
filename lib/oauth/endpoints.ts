/**
 * The OAuth endpoints' logic, shared by their routes (the /api/oauth/* paths and
 * the root /authorize, /token, /register that some clients build from the
 * origin): the authorization request's checks, the consent's answer, token
 * exchange and refresh, registration and revocation.
 */
import OAuth2Server from "@node-oauth/oauth2-server";
import { eq } from "drizzle-orm";
import { clientAddressOf } from "../auth/client-address";
import type { Database } from "../db/client";
import { oauthGrants, oauthTokens } from "../db/schema";
import { env } from "../env";
import { readLimited } from "../http/read-limited";
import { isAppError } from "../plan-engine/app-error";
import { registerAttempt, tryAgainIn } from "../services/accounts/attempt-limits";
import { revokeGrant } from "../services/accounts/connected-apps";
import { hashToken } from "../services/accounts/oauth-token-auth";
import { oauthServer } from "./authorization-server";
import { ClientMetadataError, type OAuthClient, registerClient, resolveClient } from "./clients";
import { jsonResponse, oauthError, oauthUrls } from "./config";

/** The parameters of an authorization request that Cairn keeps from the query. */
export const AUTHORIZE_PARAMS = [
  "response_type",
  "client_id",
  "redirect_uri",
  "state",
  "scope",
  "code_challenge",
  "code_challenge_method",
  "resource",
] as const;

export type AuthorizeParams = Partial<Record<(typeof AUTHORIZE_PARAMS)[number], string>>;

/**
 * Every client is one that registered itself (DCR) or a metadata document
 * anyone can publish, so a redirect URI that matches proves nothing about who
 * sent the person here: a refused request is shown as a page, never redirected
 * (otherwise /authorize is an open redirect to whatever URI a client listed).
 * The client hears back only after the person signed in and answered the
 * consent page (answerAuthorization).
 */
export type AuthorizeCheck =
  /** Fine: show the consent page for this client. */
  | { kind: "ok"; client: OAuthClient; params: AuthorizeParams; redirectUri: string }
  /** Refused: tell the person why, on Cairn's own page. */
  | { kind: "page_error"; message: string };

export function authorizeParamsOf(source: URLSearchParams): AuthorizeParams {
  const params: AuthorizeParams = {};
  for (const name of AUTHORIZE_PARAMS) {
    const value = source.get(name);
    if (value !== null) params[name] = value;
  }
  return params;
}

/**
 * The authorization response's redirect with the issuer added (RFC 9207), so
 * a client talking to several authorization servers can tell which answered
 * (a mix-up attack otherwise sends one server's code to another).
 */
export function withIssuer(location: string, issuer: string): string {
  const url = new URL(location);
  url.searchParams.set("iss", issuer);
  return url.toString();
}

/**
 * Checks an authorization request before anyone is asked to approve it: the
 * client (registered, or its metadata document fetched), the exact redirect
 * URI, the response type, PKCE with S256, Cairn's resource and scope.
 */
export async function checkAuthorizationRequest(
  db: Database,
  origin: string,
  params: AuthorizeParams,
  caller: { address: string },
): Promise<AuthorizeCheck> {
  if (!params.client_id) return { kind: "page_error", message: "The request names no client_id." };
  let client: OAuthClient | undefined;
  try {
    client = await resolveClient(db, params.client_id, {
      allowLoopback: env().CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS,
      address: caller.address,
    });
  } catch (error) {
    if (error instanceof ClientMetadataError) {
      const reason = error.message.endsWith(".") ? error.message : `${error.message}.`;
      return { kind: "page_error", message: `The client is refused: ${reason}` };
    }
    throw error;
  }
  if (!client) {
    return {
      kind: "page_error",
      message: "This client is not registered with Cairn. Ask the app to connect again.",
    };
  }
  const redirectUri = params.redirect_uri;
  if (!redirectUri || !client.redirectUris.includes(redirectUri)) {
    return {
      kind: "page_error",
      message:
        "The redirect URI is not one the client registered (it must match exactly), so Cairn will not send anything there.",
    };
  }
  const fail = (message: string): AuthorizeCheck => ({ kind: "page_error", message });
  if (params.response_type !== "code") {
    return fail("The app asked for a response type other than code, the only one Cairn supports.");
  }
  if (!params.code_challenge) {
    return fail("The app sent no PKCE code_challenge (S256), which Cairn requires.");
  }
  if (params.code_challenge_method !== "S256") {
    return fail("The app's code_challenge_method is not S256, the only one Cairn accepts.");
  }
  if (!/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge)) {
    return fail("The app's code_challenge is not a base64url SHA-256 hash.");
  }
  const resource = oauthUrls(origin).resource;
  if (params.resource !== undefined && params.resource !== resource) {
    return fail(
      `The app asked for access to ${params.resource}; this server's resource is ${resource}.`,
    );
  }
  // Scopes other than `mcp` (some platforms add `openid` or `offline_access`)
  // are ignored rather than refused (RFC 6749 §3.3): the token's scope, `mcp`,
  // is in the token response.
  return { kind: "ok", client, params, redirectUri };
}

/** Next's Request as the library's (its body, form fields, already read). */
function libraryRequest(
  method: string,
  headers: Headers,
  query: Record<string, string>,
  body: Record<string, string>,
  bodyLength: number,
) {
  const plainHeaders: Record<string, string> = Object.fromEntries(headers.entries());
  // type-is (the library's content-type check) needs to see that there is a body.
  plainHeaders["content-length"] = String(bodyLength);
  return new OAuth2Server.Request({ method, headers: plainHeaders, query, body });
}

/**
 * The person's answer on the consent page, for an authorization request that
 * passed checkAuthorizationRequest: the redirect (with a one-time code, or
 * access_denied) to send the browser to.
 */
export async function answerAuthorization(
  db: Database,
  origin: string,
  check: Extract<AuthorizeCheck, { kind: "ok" }>,
  user: { userId: string; tenantId: string },
  approved: boolean,
): Promise<string> {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(check.params)) {
    if (value !== undefined) query[name] = value;
  }
  if (!approved) query.allowed = "false";
  const request = libraryRequest("POST", new Headers(), query, {}, 0);
  const response = new OAuth2Server.Response();
  const flowUser = {
    id: user.userId,
    tenantId: user.tenantId,
    resource: oauthUrls(origin).resource,
  };
  // The client the check resolved: the library asks for it again, and must not fetch it anew.
  const clients = async (clientId: string) =>
    clientId === check.client.clientId ? check.client : undefined;
  try {
    await oauthServer(db, flowUser.resource, clients).authorize(request, response, {
      authenticateHandler: { handle: async () => flowUser },
    });
  } catch (error) {
    // access_denied (and any other error after the redirect URI was checked)
    // leaves the error redirect in the response's Location; anything else is a bug.
    if (!(error instanceof OAuth2Server.OAuthError) || !response.get("location")) throw error;
  }
  const location = response.get("location");
  if (!location) throw new Error("the authorization answered without a redirect");
  return withIssuer(location, oauthUrls(origin).issuer);
}

const MAX_FORM_BYTES = 16 * 1024;

async function formOf(
  request: Request,
): Promise<{ body: Record<string, string>; length: number } | undefined> {
  const text = await readLimited(request.body, MAX_FORM_BYTES);
  if (text === undefined) return undefined;
  return {
    body: Object.fromEntries(new URLSearchParams(text).entries()),
    length: Buffer.byteLength(text),
  };
}

/** The token endpoint: authorization_code and refresh_token grants, by the library. */
export async function tokenEndpoint(db: Database, origin: string, request: Request) {
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    return oauthError(
      400,
      "invalid_request",
      "send the token request as application/x-www-form-urlencoded",
    );
  }
  const form = await formOf(request);
  if (!form) return oauthError(413, "invalid_request", "the request body is too large");
  const grantType = form.body.grant_type;
  if (grantType !== "authorization_code" && grantType !== "refresh_token") {
    return oauthError(
      400,
      "unsupported_grant_type",
      "grant_type must be authorization_code or refresh_token",
    );
  }
  const resource = oauthUrls(origin).resource;
  if (form.body.resource !== undefined && form.body.resource !== resource) {
    return oauthError(400, "invalid_target", `resource must be ${resource}`);
  }
  const libRequest = libraryRequest(
    "POST",
    request.headers,
    Object.fromEntries(new URL(request.url).searchParams.entries()),
    form.body,
    form.length,
  );
  const libResponse = new OAuth2Server.Response();
  const address = clientAddressOf(request.headers, env().CAIRN_TRUST_PROXY);
  const clients = async (clientId: string) => {
    try {
      return await resolveClient(db, clientId, {
        allowLoopback: env().CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS,
        address,
      });
    } catch (error) {
      // A metadata document Cairn refuses is an unknown client to the library.
      if (error instanceof ClientMetadataError) return undefined;
      throw error;
    }
  };
  try {
    await oauthServer(db, resource, clients).token(libRequest, libResponse);
  } catch (error) {
    if (error instanceof OAuth2Server.OAuthError) {
      return oauthError(error.code, error.name, error.message);
    }
    throw error;
  }
  return jsonResponse(libResponse.body, libResponse.status ?? 200);
}

/**
 * RFC 7591 registration of a public client. Anyone may register, so each client
 * address gets a limited number of registrations an hour (the sign-in limits'
 * shared counters), and a refused one is answered before the body is read.
 */
export async function registrationEndpoint(db: Database, request: Request) {
  const address = clientAddressOf(request.headers, env().CAIRN_TRUST_PROXY);
  const gate = await registerAttempt(db, [{ kind: "oauth_registration_address", key: address }]);
  if (!gate.allowed) {
    return oauthError(
      429,
      "invalid_request",
      `Too many client registrations from this address. ${tryAgainIn(gate.retryAt)}`,
    );
  }
  const text = await readLimited(request.body, MAX_FORM_BYTES);
  if (text === undefined) return oauthError(413, "invalid_client_metadata", "metadata too large");
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    return oauthError(400, "invalid_client_metadata", "the body is not JSON");
  }
  try {
    const client = await registerClient(db, input);
    return jsonResponse(
      {
        client_id: client.clientId,
        client_id_issued_at: Math.floor(Date.now() / 1000),
        client_name: client.clientName ?? undefined,
        redirect_uris: client.redirectUris,
        application_type: client.applicationType,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      201,
    );
  } catch (error) {
    if (error instanceof ClientMetadataError) {
      return oauthError(400, error.error, error.message);
    }
    throw error;
  }
}

/**
 * RFC 7009 revocation by the client itself: a refresh or access token revokes
 * its whole grant (the app disconnects). Unknown tokens are answered 200 too.
 */
export async function revocationEndpoint(db: Database, request: Request) {
  const form = await formOf(request);
  if (!form) return oauthError(413, "invalid_request", "the request body is too large");
  const token = form.body.token;
  if (!token) return oauthError(400, "invalid_request", "send the token to revoke");
  const [row] = await db
    .select({ grantId: oauthTokens.grantId, tenantId: oauthGrants.tenantId })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(eq(oauthTokens.tokenHash, hashToken(token)));
  if (row) {
    await revokeGrant(db, row.tenantId, row.grantId).catch((error: unknown) => {
      // Already revoked: RFC 7009 answers 200 all the same.
      if (!isAppError(error)) throw error;
    });
  }
  return jsonResponse({}, 200);
}
