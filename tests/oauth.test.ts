/**
 * OAuth 2.1 on the MCP route (docs/oauth.md), over HTTP against the production
 * server on both databases: discovery from the 401, registration by DCR and by
 * a client metadata document this test serves, the consent page's answer (the
 * server action a browser calls), tokens that act as the approving user in
 * their tenant, refresh rotation, and each refusal with its standard error.
 * Ends with the official conformance suite's authorization-server scenarios.
 * The browser journey with the SDK client's own OAuth support is e2e/oauth.spec.ts.
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oauthTokens } from "@/lib/db/schema";
import { hashToken } from "@/lib/services/accounts/oauth-token-auth";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { connectAgent, postMcp } from "./support/mcp-client";
import { signInOverHttp, type WebSession } from "./support/web-session";

const REDIRECT_URI = "http://127.0.0.1:9/callback";

/** A port nothing listens on now, for the conformance suite's callback server. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  return { verifier, challenge };
}

type TokenAnswer = {
  status: number;
  body: {
    access_token?: string;
    refresh_token?: string;
    error?: string;
    expires_in?: number;
    scope?: string;
    token_type?: string;
  };
  headers: Headers;
};

async function postToken(app: AppServer, fields: Record<string, string>): Promise<TokenAnswer> {
  const response = await fetch(`${app.url}/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

async function register(app: AppServer, metadata: Record<string, unknown>) {
  const response = await fetch(`${app.url}/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(metadata),
  });
  return { status: response.status, body: await response.json() };
}

/** An MCP initialize with a bearer token: the status tells whether the token is accepted. */
const mcpStatus = (app: AppServer, token: string) => postMcp(app.mcpUrl, token);

/** An MCP ping sent with another Host header: the server as reached by another of its names. */
function mcpAt(
  host: string,
  app: AppServer,
  token: string,
): Promise<{ status: number; challenge: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      app.mcpUrl,
      {
        method: "POST",
        headers: {
          Host: host,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          Authorization: `Bearer ${token}`,
        },
      },
      (response) => {
        response.resume();
        resolve({
          status: response.statusCode ?? 0,
          challenge: String(response.headers["www-authenticate"] ?? ""),
        });
      },
    );
    request.on("error", reject);
    request.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }));
  });
}

/** A GET with another Host header, as a client forging it would send it. */
function getWithHost(
  app: AppServer,
  host: string,
  path: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${app.url}${path}`, { headers: { Host: host } }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
    request.end();
  });
}

/** The server action's redirect (`x-action-redirect: <url>;<push|replace>`). */
function actionRedirect(headers: Headers): URL {
  const value = headers.get("x-action-redirect");
  if (!value) throw new Error("the consent answered without a redirect");
  return new URL(value.slice(0, value.lastIndexOf(";")));
}

describe.each(BACKENDS)("OAuth on the MCP route (%s)", (backend) => {
  let app: AppServer;
  let documents: Server;
  let documentsUrl: string;
  let alpha: WebSession;
  let researcher: WebSession;
  let beta: WebSession;
  let clientId: string;

  /** The whole authorization step as the browser does it: the consent page, then its answer. */
  async function authorize(
    session: WebSession,
    options: {
      clientId?: string;
      decision?: "approve" | "deny";
      extra?: Record<string, string>;
    } = {},
  ) {
    const { verifier, challenge } = pkce();
    const params: Record<string, string> = {
      response_type: "code",
      client_id: options.clientId ?? clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "state-123",
      resource: app.mcpUrl,
      // Scopes other than mcp are ignored, not refused.
      scope: "mcp offline_access",
      ...options.extra,
    };
    const path = `/authorize?${new URLSearchParams(params)}`;
    const page = await session.get(path);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('data-testid="consent"');
    const answer = await session.action(path, "answerConsentAction", {
      ...params,
      decision: options.decision ?? "approve",
    });
    const location = actionRedirect(answer.headers);
    // RFC 9207: every authorization response names its issuer.
    expect(location.searchParams.get("iss")).toBe(app.url);
    return { location, verifier, code: location.searchParams.get("code") ?? "" };
  }

  async function tokensFor(session: WebSession, options: { clientId?: string } = {}) {
    const { code, verifier } = await authorize(session, options);
    const answer = await postToken(app, {
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
      client_id: options.clientId ?? clientId,
      resource: app.mcpUrl,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ token_type: "Bearer", scope: "mcp" });
    // An hour, counted from when the token was stored (so a second may have gone).
    expect(answer.body.expires_in).toBeGreaterThan(3500);
    expect(answer.body.expires_in).toBeLessThanOrEqual(3600);
    expect(answer.headers.get("cache-control")).toBe("no-store");
    return answer.body as { access_token: string; refresh_token: string };
  }

  beforeAll(async () => {
    // The client metadata documents: one well-formed, one too large, one that never answers.
    documents = createServer((request, response) => {
      if (request.url === "/client.json") {
        response.setHeader("Content-Type", "application/json");
        response.end(
          JSON.stringify({
            client_id: `${documentsUrl}/client.json`,
            client_name: "Document <b>Client</b>",
            redirect_uris: [REDIRECT_URI],
            token_endpoint_auth_method: "none",
            grant_types: ["authorization_code", "refresh_token"],
          }),
        );
      } else if (request.url === "/large.json") {
        response.setHeader("Content-Type", "application/json");
        response.end(
          JSON.stringify({ client_id: `${documentsUrl}/large.json`, pad: "x".repeat(20_000) }),
        );
      } else if (request.url === "/redirect.json") {
        response.writeHead(302, { Location: `${documentsUrl}/client.json` });
        response.end();
      } else if (request.url !== "/slow.json") {
        response.writeHead(404);
        response.end();
      }
      // /slow.json: never answered.
    });
    await new Promise<void>((resolve) => documents.listen(0, "127.0.0.1", resolve));
    documentsUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;

    app = await startAppServer(backend, { env: { CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS: "1" } });
    alpha = await signInOverHttp(app.url, app.tenantA.email);
    researcher = await signInOverHttp(app.url, app.tenantA.researcherEmail);
    beta = await signInOverHttp(app.url, app.tenantB.email);
    const registered = await register(app, {
      client_name: "Test Client",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    });
    expect(registered.status).toBe(201);
    // Sent no application_type (a 2025-era client): its loopback redirect says native.
    expect(registered.body.application_type).toBe("native");
    clientId = registered.body.client_id;
  });

  afterAll(async () => {
    documents.closeAllConnections();
    await new Promise((resolve) => documents.close(resolve));
    await app?.stop();
  });

  it("names its metadata in the 401 and serves the discovery documents, with CORS", async () => {
    const refused = await mcpStatus(app, "");
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get("www-authenticate") ?? "";
    const metadataUrl = `${app.url}/.well-known/oauth-protected-resource/api/mcp`;
    expect(challenge).toContain(`resource_metadata="${metadataUrl}"`);

    for (const path of [
      "/.well-known/oauth-protected-resource/api/mcp",
      "/.well-known/oauth-protected-resource",
    ]) {
      const response = await fetch(`${app.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(await response.json()).toMatchObject({
        resource: app.mcpUrl,
        authorization_servers: [app.url],
        scopes_supported: ["mcp"],
      });
    }
    for (const path of [
      "/.well-known/oauth-authorization-server",
      "/.well-known/openid-configuration",
    ]) {
      const response = await fetch(`${app.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(await response.json()).toMatchObject({
        issuer: app.url,
        authorization_endpoint: `${app.url}/authorize`,
        token_endpoint: `${app.url}/token`,
        registration_endpoint: `${app.url}/register`,
        code_challenge_methods_supported: ["S256"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        token_endpoint_auth_methods_supported: ["none"],
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
      });
    }
    const preflight = await fetch(`${app.url}/token`, {
      method: "OPTIONS",
      headers: { Origin: "http://inspector.example", "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    // The same endpoints under /api/oauth as at the root.
    const underApi = await fetch(`${app.url}/api/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["https://app.example/cb"] }),
    });
    expect(underApi.status).toBe(201);
  });

  // The official suite's authorization-server scenarios (0.2.0-alpha.12, run on
  // Node 22 by npx; a missing suite fails, never skips). Its code grant waits
  // for a person to approve in a browser: the test approves the URL it prints
  // as the browser would (a signed-in session's consent), and the redirect
  // reaches the suite's callback.
  it("passes the official MCP conformance suite's authorization server scenarios", async () => {
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const registered = await register(app, {
      client_name: "MCP conformance suite",
      application_type: "native",
      redirect_uris: [redirectUri],
    });
    expect(registered.status).toBe(201);
    // Every scenario in one run: the code grant reads the metadata scenario's result.
    {
      const suite = spawn(
        "npx",
        [
          "-y",
          "-p",
          "node@22",
          "-p",
          "@modelcontextprotocol/conformance@0.2.0-alpha.12",
          "--",
          "conformance",
          "authorization",
          "--url",
          app.url,
          "--client-id",
          registered.body.client_id,
          "--resource",
          app.mcpUrl,
          "--port",
          String(port),
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let output = "";
      let approved = false;
      const exited = new Promise<number | null>((resolve) => suite.on("close", resolve));
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const url = /(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/.exec(output)?.[1];
        if (url && !approved) {
          approved = true;
          void approveAsTheBrowser(new URL(url)).catch((error: unknown) => {
            output += `\napproval failed: ${String(error)}`;
            suite.kill();
          });
        }
      };
      suite.stdout.on("data", onData);
      suite.stderr.on("data", onData);
      const code = await exited;
      expect(code, output).toBe(0);
      expect(output, output).toMatch(
        /✓ authorization-server-metadata-endpoint: \d+ passed, 0 failed/,
      );
      expect(output, output).toMatch(/✓ authorization-code-grant: [1-9]\d* passed, 0 failed/);
      expect(output, output).toMatch(/Total: \d+ passed, 0 failed/);
    }
  }, 600_000);

  /** What a signed-in person's browser does with an authorization URL: approve, follow the redirect. */
  async function approveAsTheBrowser(url: URL) {
    const path = `${url.pathname}${url.search}`;
    const page = await alpha.get(path);
    expect(page.status).toBe(200);
    const answer = await alpha.action(path, "answerConsentAction", {
      ...Object.fromEntries(url.searchParams),
      decision: "approve",
    });
    await fetch(actionRedirect(answer.headers));
  }

  it("registers public clients only, with redirect URIs it can trust", async () => {
    const refusals: [Record<string, unknown>, string][] = [
      [
        { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "client_secret_basic" },
        "invalid_client_metadata",
      ],
      [
        { redirect_uris: [REDIRECT_URI], grant_types: ["client_credentials"] },
        "invalid_client_metadata",
      ],
      [{ redirect_uris: [] }, "invalid_client_metadata"],
      [{ redirect_uris: ["http://evil.example/cb"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri"],
    ];
    for (const [metadata, error] of refusals) {
      const answer = await register(app, metadata);
      expect(answer.status, JSON.stringify(metadata)).toBe(400);
      expect(answer.body.error, JSON.stringify(metadata)).toBe(error);
    }
  });

  it("gives a token that acts as the approving user in their tenant, and refreshes it with rotation", async () => {
    const alphaKey = await connectAgent(app.mcpUrl, app.tenantA.key);
    const betaKey = await connectAgent(app.mcpUrl, app.tenantB.key);
    const alphaPlan = await alphaKey.ok("create_research_plan", {
      name: "Alpha's plan",
      researchQuestion: "q",
      steps: [{ stepType: "search", instructions: "Search." }],
    });
    const betaPlan = await betaKey.ok("create_research_plan", {
      name: "Beta's plan",
      researchQuestion: "q",
      steps: [{ stepType: "search", instructions: "Search." }],
    });
    await alphaKey.close();
    await betaKey.close();

    const tokens = await tokensFor(alpha);
    expect(tokens.access_token).toMatch(/^cairn_at_/);
    const agent = await connectAgent(app.mcpUrl, tokens.access_token);
    const active = await agent.ok("list_active_plans", { limit: 100 });
    const ids = active.plans.map((plan: { planId: string }) => plan.planId);
    expect(ids).toContain(alphaPlan.planId);
    expect(ids).not.toContain(betaPlan.planId);
    expect(await agent.fails("get_plan_status", { planId: betaPlan.planId })).toMatch(/^NOT_FOUND/);
    const created = await agent.ok("create_research_plan", {
      name: "Made by the app",
      researchQuestion: "q",
      steps: [{ stepType: "search", instructions: "Search." }],
    });
    await agent.close();

    // The plan's audit trail names the app and the user who approved it.
    const plan = await alpha.get(`/plans/${created.planId}`);
    expect(await plan.text()).toContain(`app &quot;Test Client&quot; of ${app.tenantA.email}`);

    // Refresh: new tokens; the used refresh token is dead (rotation).
    const refreshed = await postToken(app, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
      resource: app.mcpUrl,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(tokens.refresh_token);
    expect((await mcpStatus(app, refreshed.body.access_token ?? "")).status).toBe(200);
    const replayed = await postToken(app, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(replayed.status).toBe(400);
    expect(replayed.body.error).toBe("invalid_grant");
    // A rotated refresh token used again means a copy exists: the whole app is revoked.
    expect((await mcpStatus(app, refreshed.body.access_token ?? "")).status).toBe(401);
    const afterReplay = await postToken(app, {
      grant_type: "refresh_token",
      refresh_token: refreshed.body.refresh_token ?? "",
      client_id: clientId,
    });
    expect(afterReplay.body.error).toBe("invalid_grant");
    // Another tenant's user approving the same client gets their own tenant.
    const betaTokens = await tokensFor(beta);
    const betaAgent = await connectAgent(app.mcpUrl, betaTokens.access_token);
    const betaActive = await betaAgent.ok("list_active_plans", { limit: 100 });
    expect(betaActive.plans.map((p: { planId: string }) => p.planId)).toEqual([betaPlan.planId]);
    await betaAgent.close();
  });

  it("refuses a wrong PKCE verifier, a reused code and a redirect URI that does not match", async () => {
    const first = await authorize(alpha);
    const wrong = await postToken(app, {
      grant_type: "authorization_code",
      code: first.code,
      code_verifier: pkce().verifier,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");

    const second = await authorize(alpha);
    const exchange = {
      grant_type: "authorization_code",
      code: second.code,
      code_verifier: second.verifier,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
    };
    const exchanged = await postToken(app, exchange);
    expect(exchanged.status).toBe(200);
    expect((await mcpStatus(app, exchanged.body.access_token ?? "")).status).toBe(200);
    const reused = await postToken(app, exchange);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    // The code leaked: the tokens it was exchanged for stop too.
    expect((await mcpStatus(app, exchanged.body.access_token ?? "")).status).toBe(401);

    // At the token endpoint: the code was issued for another redirect URI.
    const third = await authorize(alpha);
    const mismatch = await postToken(app, {
      ...exchange,
      code: third.code,
      code_verifier: third.verifier,
      redirect_uri: "http://127.0.0.1:9/other",
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toMatch(/^invalid_(request|grant)$/);

    // At the authorization endpoint: an unregistered redirect URI is never redirected to.
    const { challenge } = pkce();
    const page = await alpha.get(
      `/authorize?${new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: "https://evil.example/cb",
        code_challenge: challenge,
        code_challenge_method: "S256",
      })}`,
    );
    expect(page.status).toBe(200);
    expect(page.headers.get("location")).toBeNull();
    expect(await page.text()).toContain("redirect URI is not one the client registered");
  });

  it("refuses plain PKCE, no PKCE and another resource on a page, and tokens for another resource (invalid_target)", async () => {
    const base = {
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      state: "s1",
    };
    const cases: Record<string, string>[] = [
      { code_challenge: "a".repeat(43), code_challenge_method: "plain" },
      {},
      {
        ...{ code_challenge: pkce().challenge, code_challenge_method: "S256" },
        resource: "https://other.example/mcp",
      },
    ];
    for (const extra of cases) {
      // Even for a registered redirect URI: a refused request is a page, never a redirect.
      const response = await alpha.get(`/authorize?${new URLSearchParams({ ...base, ...extra })}`);
      expect(response.status, JSON.stringify(extra)).toBe(200);
      expect(response.headers.get("location")).toBeNull();
      expect(await response.text()).toContain('data-testid="authorize-error"');
    }

    const flow = await authorize(alpha);
    // A token is bound to the resource it was issued for: at another of the
    // server's addresses (localhost instead of 127.0.0.1) it is refused.
    const tokens = await tokensFor(alpha);
    expect((await mcpStatus(app, tokens.access_token)).status).toBe(200);
    const elsewhere = await mcpAt(`localhost:${app.port}`, app, tokens.access_token);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.challenge).toContain('error="invalid_token"');
    expect(elsewhere.challenge).toContain(
      `resource_metadata="http://localhost:${app.port}/.well-known/oauth-protected-resource/api/mcp"`,
    );

    const otherAudience = await postToken(app, {
      grant_type: "authorization_code",
      code: flow.code,
      code_verifier: flow.verifier,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      resource: "https://other.example/mcp",
    });
    expect(otherAudience.status).toBe(400);
    expect(otherAudience.body.error).toBe("invalid_target");
  });

  it("redirects nobody from /authorize before consent, and names no issuer from a forged Host", async () => {
    // As in the issue: no cookie, a client registered with the phishing page as its redirect URI.
    const phish = await register(app, { redirect_uris: ["https://evil.example/phish"] });
    expect(phish.status).toBe(201);
    const page = await fetch(
      `${app.url}/authorize?${new URLSearchParams({
        client_id: phish.body.client_id,
        redirect_uri: "https://evil.example/phish",
        response_type: "x",
      })}`,
      { redirect: "manual" },
    );
    expect(page.status).toBe(200);
    expect(page.headers.get("location")).toBeNull();
    expect(await page.text()).toContain('data-testid="authorize-error"');

    const forged = await getWithHost(
      app,
      "localhost:1@evil.example",
      "/.well-known/oauth-authorization-server",
    );
    expect(forged.status).toBe(400);
    expect(forged.body).toContain("This host is not an address of this server");
    expect(forged.body).not.toContain("evil.example");
  });

  it("returns access_denied to the client when the person denies", async () => {
    const denied = await authorize(alpha, { decision: "deny" });
    expect(denied.location.origin + denied.location.pathname).toBe(REDIRECT_URI);
    expect(denied.location.searchParams.get("error")).toBe("access_denied");
    expect(denied.location.searchParams.get("state")).toBe("state-123");
    expect(denied.code).toBe("");
  });

  it("accepts a client metadata document and refuses one too large, too slow, redirecting or private", async () => {
    const documentClient = `${documentsUrl}/client.json`;
    const page = await alpha.get(
      `/authorize?${new URLSearchParams({
        response_type: "code",
        client_id: documentClient,
        redirect_uri: REDIRECT_URI,
        code_challenge: pkce().challenge,
        code_challenge_method: "S256",
      })}`,
    );
    const html = await page.text();
    // The client's name is untrusted text: escaped, and marked unverified.
    expect(html).toContain("Document &lt;b&gt;Client&lt;/b&gt;");
    expect(html).toContain("name not verified");
    const tokens = await tokensFor(alpha, { clientId: documentClient });
    expect((await mcpStatus(app, tokens.access_token)).status).toBe(200);

    // Whatever the network did, the page says the same; the reason is in the server's log.
    const unreachable =
      /the address of its metadata document is not allowed or could not be reached/;
    const refusals: [string, RegExp, string][] = [
      [`${documentsUrl}/large.json`, unreachable, "is larger than 5120 bytes"],
      [`${documentsUrl}/slow.json`, unreachable, "did not answer within 5000 ms"],
      [`${documentsUrl}/redirect.json`, unreachable, "HTTP 302 (redirects are not followed)"],
      ["https://10.1.2.3/client.json", unreachable, "10.1.2.3 is a private or loopback address"],
      ["https://[fd00::1]/client.json", unreachable, "is a private or loopback address"],
      ["http://app.example/client.json", /must be https/, ""],
    ];
    for (const [id, reason, logged] of refusals) {
      const refused = await alpha.get(
        `/authorize?${new URLSearchParams({
          response_type: "code",
          client_id: id,
          redirect_uri: REDIRECT_URI,
          code_challenge: pkce().challenge,
          code_challenge_method: "S256",
        })}`,
      );
      expect(refused.status, id).toBe(200);
      const text = await refused.text();
      expect(text, id).toContain('data-testid="authorize-error"');
      expect(text, id).toMatch(reason);
      expect(text, id).not.toContain(logged || "(nothing logged)");
      if (logged) expect(app.serverOutput(), id).toContain(logged);
      // The token endpoint answers such a client with the standard error.
      const token = await postToken(app, {
        grant_type: "authorization_code",
        code: "x",
        code_verifier: pkce().verifier,
        redirect_uri: REDIRECT_URI,
        client_id: id,
      });
      expect(token.body.error, id).toBe("invalid_client");
    }
  });

  it("names the app in the tool-call log (earlier tests' calls)", async () => {
    const log = await (await alpha.get("/admin/tool-calls")).text();
    expect(log).toContain("app Test Client");
  });

  it("stops a token when its app is revoked or its user disabled", async () => {
    const tokens = await tokensFor(alpha);
    expect((await mcpStatus(app, tokens.access_token)).status).toBe(200);
    const users = await alpha.get("/admin/users");
    const html = await users.text();
    const grantIds = [...html.matchAll(/name="grantId" value="([0-9a-f-]{36})"/g)].map((m) => m[1]);
    expect(grantIds.length).toBeGreaterThan(0);
    // A researcher's own-apps action cannot reach the admin's apps.
    for (const grantId of grantIds) {
      const foreign = await researcher.action("/account", "revokeOwnAppAction", {
        grantId: grantId ?? "",
      });
      expect(foreign.text).toContain("Not found");
    }
    expect((await mcpStatus(app, tokens.access_token)).status).toBe(200);
    for (const grantId of grantIds) {
      const revoked = await alpha.action("/admin/users", "revokeAppAction", {
        grantId: grantId ?? "",
      });
      expect(revoked.text).toContain("App revoked");
    }
    const refused = await mcpStatus(app, tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const refresh = await postToken(app, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(refresh.body.error).toBe("invalid_grant");

    // Another tenant's admin cannot revoke Alpha's apps.
    const researcherTokens = await tokensFor(researcher);
    const own = await researcher.get("/account");
    const ownGrant = /name="grantId" value="([0-9a-f-]{36})"/.exec(await own.text())?.[1] ?? "";
    const foreign = await beta.action("/admin/users", "revokeAppAction", { grantId: ownGrant });
    expect(foreign.text).toContain("Not found");
    expect((await mcpStatus(app, researcherTokens.access_token)).status).toBe(200);

    // Disabling the researcher stops their token at once.
    const researcherId = /value="disable:([0-9a-f-]{36})"/.exec(
      await (await alpha.get("/admin/users")).text(),
    );
    expect(researcherId).not.toBeNull();
    await alpha.action("/admin/users", "manageUserAction", { op: `disable:${researcherId?.[1]}` });
    expect((await mcpStatus(app, researcherTokens.access_token)).status).toBe(401);
  });

  it("lets a client revoke its own tokens (RFC 7009)", async () => {
    const tokens = await tokensFor(alpha);
    const revoke = (token: string) =>
      fetch(`${app.url}/api/oauth/revoke`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token, client_id: clientId }),
      });
    expect((await revoke(tokens.refresh_token)).status).toBe(200);
    expect((await mcpStatus(app, tokens.access_token)).status).toBe(401);
    // Revoking again, or an unknown token, is answered 200 all the same.
    expect((await revoke(tokens.refresh_token)).status).toBe(200);
    expect((await revoke("cairn_rt_unknown")).status).toBe(200);
  });

  it("refuses an expired access token", async () => {
    const tokens = await tokensFor(alpha);
    expect((await mcpStatus(app, tokens.access_token)).status).toBe(200);
    // The embedded database is open in one process at a time: stop, age the token, start again.
    await app.stopServer();
    const handle = await app.openDatabase();
    try {
      await handle.db
        .update(oauthTokens)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(oauthTokens.tokenHash, hashToken(tokens.access_token)));
    } finally {
      await handle.close();
    }
    await app.startServer();
    const refused = await mcpStatus(app, tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    // API keys keep working beside tokens.
    expect((await mcpStatus(app, app.tenantA.key)).status).toBe(200);
  });

  // Last: it uses up this address's registrations.
  it("limits registrations per client address", async () => {
    let answer = await register(app, { redirect_uris: [REDIRECT_URI] });
    let count = 1;
    while (answer.status === 201 && count < 40) {
      answer = await register(app, { redirect_uris: [REDIRECT_URI] });
      count += 1;
    }
    expect(answer.status).toBe(429);
    expect(answer.body.error).toBe("invalid_request");
    expect(answer.body.error_description).toMatch(
      /^Too many client registrations from this address\. Try again in \d+ minutes?\.$/,
    );
    // Clients registered before keep working.
    expect((await authorize(alpha)).code).not.toBe("");
  });
});
