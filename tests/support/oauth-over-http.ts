/**
 * A connected app as a person makes one, over HTTP against the production
 * server: the client registers (DCR), the signed-in person approves it on the
 * consent page (the server action a browser calls), and the client exchanges
 * the code for tokens for the server's MCP resource. For tests that need a
 * connection a person authorized; the OAuth door itself is tests/oauth.test.ts.
 */
import { createHash, randomBytes } from "node:crypto";
import type { WebSession } from "./web-session";

const REDIRECT_URI = "http://127.0.0.1:9/callback";

export async function connectAppOverHttp(
  app: { url: string; mcpUrl: string },
  person: WebSession,
  clientName: string,
): Promise<{ clientId: string; accessToken: string }> {
  const registered = await fetch(`${app.url}/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ redirect_uris: [REDIRECT_URI], client_name: clientName }),
  });
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const verifier = randomBytes(32).toString("base64url");
  const params = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    state: "state",
    resource: app.mcpUrl,
  };
  const path = `/authorize?${new URLSearchParams(params)}`;
  const page = await person.get(path);
  if (page.status !== 200) throw new Error(`the consent page answered ${page.status}`);
  const consent = await person.action(path, "answerConsentAction", {
    ...params,
    decision: "approve",
  });
  const redirect = consent.headers.get("x-action-redirect") ?? "";
  const code = new URL(redirect.slice(0, redirect.lastIndexOf(";"))).searchParams.get("code");
  if (!code) throw new Error("the consent gave no code");
  const token = await fetch(`${app.url}/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      resource: app.mcpUrl,
    }),
  });
  const { access_token: accessToken } = (await token.json()) as { access_token?: string };
  if (!accessToken) throw new Error(`the token endpoint answered ${token.status}`);
  return { clientId, accessToken };
}
