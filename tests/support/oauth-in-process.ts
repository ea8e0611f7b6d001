/**
 * The OAuth flow in process, through the same functions the routes and the
 * consent page call (lib/oauth/endpoints.ts): register a client, approve it
 * for a person, exchange the code. For tests of rules around tokens; the wire
 * itself is tested over HTTP in tests/oauth.test.ts.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Database } from "@/lib/db/client";
import {
  answerAuthorization,
  checkAuthorizationRequest,
  registrationEndpoint,
  tokenEndpoint,
} from "@/lib/oauth/endpoints";

export const ORIGIN = "http://127.0.0.1:3000";
export const RESOURCE = `${ORIGIN}/api/mcp`;
export const REDIRECT_URI = "http://127.0.0.1:9/callback";
/** The address an authorization request comes from, where a test does not vary it. */
export const CALLER = { address: "192.0.2.10" };

export function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** POST /register with a JSON body; `peer` is the connection's address when the header is installed. */
export async function registerInProcess(db: Database, metadata: unknown, peer?: string) {
  const response = await registrationEndpoint(
    db,
    new Request(`${ORIGIN}/register`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        ...(peer ? { "x-cairn-test-peer": peer } : {}),
      },
      body: typeof metadata === "string" ? metadata : JSON.stringify(metadata),
    }),
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** POST /token with form fields. */
export async function postTokenInProcess(db: Database, fields: Record<string, string>) {
  const response = await tokenEndpoint(
    db,
    ORIGIN,
    new Request(`${ORIGIN}/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields),
    }),
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * A person approves a client (registered here unless given) on the consent
 * page: the code the client would then exchange, with its PKCE verifier.
 */
export async function approveApp(
  db: Database,
  user: { userId: string; tenantId: string },
  clientId?: string,
): Promise<{ clientId: string; code: string; verifier: string }> {
  const id =
    clientId ??
    String((await registerInProcess(db, { redirect_uris: [REDIRECT_URI] })).body.client_id);
  const { verifier, challenge } = pkce();
  const check = await checkAuthorizationRequest(
    db,
    ORIGIN,
    {
      response_type: "code",
      client_id: id,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: "S256",
    },
    CALLER,
  );
  if (check.kind !== "ok") throw new Error(`authorization refused: ${JSON.stringify(check)}`);
  const location = new URL(await answerAuthorization(db, ORIGIN, check, user, true));
  return { clientId: id, code: location.searchParams.get("code") ?? "", verifier };
}

/** POST /token exchanging an approved code, as the client does after the redirect. */
export function exchangeCode(db: Database, approved: Awaited<ReturnType<typeof approveApp>>) {
  return postTokenInProcess(db, {
    grant_type: "authorization_code",
    code: approved.code,
    code_verifier: approved.verifier,
    redirect_uri: REDIRECT_URI,
    client_id: approved.clientId,
  });
}

/** A person approves a client (registered here unless given) and the client gets tokens. */
export async function connectApp(
  db: Database,
  user: { userId: string; tenantId: string },
  clientId?: string,
): Promise<{ clientId: string; accessToken: string; refreshToken: string }> {
  const approved = await approveApp(db, user, clientId);
  const token = await exchangeCode(db, approved);
  if (token.status !== 200) throw new Error(`token refused: ${JSON.stringify(token.body)}`);
  return {
    clientId: approved.clientId,
    accessToken: String(token.body.access_token),
    refreshToken: String(token.body.refresh_token),
  };
}
