/**
 * The MCP authorization flow end to end, as Claude.ai or ChatGPT run it: the
 * official SDK client's OAuth support (an OAuthClientProvider on the
 * Streamable HTTP transport) knows only Cairn's MCP URL; it discovers the
 * authorization server from the 401, registers (by Dynamic Client Registration,
 * or with a client metadata document this test serves), and sends the person
 * to a real browser to sign in and approve. Then tools act as that person in
 * their tenant, the token refreshes, and revoking the app in the web UI makes
 * the next call fail with 401. Both eras: the last 1.x SDK client (revision
 * 2025-11-25) and the SDK v2 client pinned to revision 2026-07-28, which
 * registers with an `application_type` and runs a plan with a review.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  Client as ModernClient,
  type OAuthClientProvider as ModernOAuthClientProvider,
  StreamableHTTPClientTransport as ModernTransport,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import {
  auth,
  type OAuthClientProvider,
  UnauthorizedError,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Page } from "@playwright/test";
import { type AppServer, SEED_PASSWORD, startAppServer } from "../tests/support/app-server";
import { test as base, expect, keepScreenshot, mcpStatus } from "./fixtures";

// This file's own server: client metadata documents at http://127.0.0.1 are
// allowed only with the test/dev flag (docs/oauth.md).
const test = base.extend<object, { app: AppServer }>({
  app: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright fixtures must destructure their dependencies, here none
    async ({}, use) => {
      const app = await startAppServer("postgres", {
        env: { CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS: "1" },
      });
      await use(app);
      await app.stop();
    },
    { scope: "worker", timeout: 120_000 },
  ],
});

/** The client side's storage, in memory as a desktop app would keep it on disk. */
class TestProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;

  constructor(
    readonly redirectUrl: string,
    readonly name: string,
    preset?: OAuthClientInformationMixed,
  ) {
    this.information = preset;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  /** What the SDK calls when the server refuses a grant: drop what it names, then start over. */
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "client") this.information = undefined;
  }
}

async function connect(app: AppServer, provider: TestProvider) {
  const client = new Client({ name: "oauth-e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(app.mcpUrl), {
    authProvider: provider,
  });
  await client.connect(transport);
  return { client, transport };
}

/** The same storage for the SDK v2 client, which also sends its application type. */
class ModernProvider implements ModernOAuthClientProvider {
  information: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  discovery: OAuthDiscoveryState | undefined;

  constructor(
    readonly redirectUrl: string,
    readonly name: string,
  ) {}

  get clientMetadata() {
    return {
      client_name: this.name,
      application_type: "native",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: StoredOAuthClientInformation) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  /** Kept across the redirect, so the SDK checks the code goes back to the server that issued it. */
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

/** What the person's part needs from either era's provider. */
type Approvable = { redirectUrl: string; name: string; authorizationUrl: URL | undefined };

/**
 * The person's part in the browser: the authorization URL, sign-in (the consent
 * page sends them there and back), the consent page, Approve. Returns the query
 * of the URL the browser was redirected to the client with (the code in it).
 */
async function approveInBrowser(page: Page, provider: Approvable, email: string) {
  const callback = new URL(provider.redirectUrl);
  let answer: URLSearchParams | null = null;
  await page.route(`${callback.origin}/**`, async (route) => {
    answer = new URL(route.request().url()).searchParams;
    await route.fulfill({
      status: 200,
      contentType: "text/plain",
      body: "You may close this tab.",
    });
  });
  await page.goto(String(provider.authorizationUrl));
  await expect(page).toHaveURL(/\/sign-in\?callbackUrl=/);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(SEED_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("consent")).toBeVisible();
  await expect(page.getByTestId("consent-client")).toHaveText(provider.name);
  await expect(page.getByTestId("consent-redirect-host")).toHaveText(callback.host);
  await expect(page.getByTestId("consent-account")).toContainText(email);
  await keepScreenshot(page, "oauth-consent");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect.poll(() => answer).not.toBeNull();
  return answer as unknown as URLSearchParams;
}

let documents: Server;
let documentsUrl = "";
const CALLBACK = "http://127.0.0.1:9/oauth/callback";

test.beforeAll(async () => {
  documents = createServer((request, response) => {
    response.setHeader("Content-Type", "application/json");
    response.end(
      JSON.stringify({
        client_id: `${documentsUrl}${request.url}`,
        client_name: "Document App",
        redirect_uris: [CALLBACK],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      }),
    );
  });
  await new Promise<void>((resolve) => documents.listen(0, "127.0.0.1", resolve));
  documentsUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  documents.closeAllConnections();
  await new Promise((resolve) => documents.close(resolve));
});

for (const registration of ["dynamic registration", "a client metadata document"] as const) {
  test(`an MCP client that knows only the URL connects by ${registration}, acts as the approver, refreshes, and stops when revoked`, async ({
    app,
    page,
  }) => {
    const byDocument = registration === "a client metadata document";
    const provider = byDocument
      ? // A platform with a metadata document names it as its client_id. The SDK
        // sends only https:// documents itself; here the document is on loopback
        // http (the test flag), so the client starts with it as its identity.
        new TestProvider(CALLBACK, "Document App", { client_id: `${documentsUrl}/client.json` })
      : new TestProvider(CALLBACK, "Registered App");

    // Knowing only the MCP URL: the 401 leads to the metadata, registration and the authorization URL.
    await expect(connect(app, provider)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.information?.client_id).toBeTruthy();
    const authorizationUrl = provider.authorizationUrl as URL;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${app.url}/authorize`);
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("resource")).toBe(app.mcpUrl);

    const email = byDocument ? app.tenantB.email : app.tenantA.email;
    const code = (await approveInBrowser(page, provider, email)).get("code") ?? "";
    const first = new StreamableHTTPClientTransport(new URL(app.mcpUrl), {
      authProvider: provider,
    });
    await first.finishAuth(code);
    expect(provider.saved?.access_token).toMatch(/^cairn_at_/);

    // Tools act as the approving user, in their tenant.
    const { client } = await connect(app, provider);
    const created = await client.callTool({
      name: "create_research_plan",
      arguments: {
        name: `Plan via ${registration}`,
        researchQuestion: "Does OAuth work?",
        steps: [{ stepType: "search", instructions: "Search." }],
      },
    });
    expect(created.isError).not.toBe(true);
    const planId = (created.structuredContent as { planId: string }).planId;
    const listed = await client.callTool({ name: "list_active_plans", arguments: { limit: 100 } });
    const plans = (listed.structuredContent as { plans: { planId: string; name: string }[] }).plans;
    expect(plans.map((plan) => plan.planId)).toContain(planId);
    // Seeded tenants have no other plans; a token of one never lists the other's.
    expect(plans.every((plan) => plan.name.startsWith("Plan via"))).toBe(true);
    await page.goto(`/plans/${planId}`);
    await expect(page.getByText(`app "${provider.name}" of ${email}`).first()).toBeVisible();

    // Refresh: the SDK trades the refresh token for new tokens, and the new access token works.
    const before = provider.saved;
    expect(await auth(provider, { serverUrl: app.mcpUrl })).toBe("AUTHORIZED");
    expect(provider.saved?.access_token).not.toBe(before?.access_token);
    expect(provider.saved?.refresh_token).not.toBe(before?.refresh_token);
    expect((await client.callTool({ name: "ping", arguments: {} })).isError).not.toBe(true);

    // The person sees the app on their account page and revokes it: the next call gets 401.
    await page.goto("/account");
    const apps = page.getByTestId("connected-apps");
    await expect(apps).toContainText(provider.name);
    await apps.getByRole("button", { name: `Revoke app ${provider.name}` }).click();
    await expect(apps.getByRole("row", { name: provider.name })).toContainText("Revoked");
    expect(await mcpStatus(app, provider.saved?.access_token ?? "", { method: "ping" })).toBe(401);
    // The SDK client's refresh is refused too, so it asks for a new authorization.
    await expect(client.callTool({ name: "ping", arguments: {} })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    await client.close();
  });
}

test("an admin revokes a user's connected app on Users & keys", async ({ app, page }) => {
  const provider = new TestProvider(CALLBACK, "Team App");
  await expect(connect(app, provider)).rejects.toBeInstanceOf(UnauthorizedError);
  const code = (await approveInBrowser(page, provider, app.tenantA.email)).get("code") ?? "";
  await new StreamableHTTPClientTransport(new URL(app.mcpUrl), {
    authProvider: provider,
  }).finishAuth(code);
  const { client } = await connect(app, provider);
  expect((await client.callTool({ name: "ping", arguments: {} })).isError).not.toBe(true);

  await page.goto("/admin/users");
  const apps = page.getByTestId("connected-apps");
  await expect(apps).toContainText(app.tenantA.email);
  await apps.getByRole("button", { name: "Revoke app Team App" }).click();
  await expect(apps.getByRole("row", { name: "Team App" })).toContainText("Revoked");
  await expect(client.callTool({ name: "ping", arguments: {} })).rejects.toBeInstanceOf(
    UnauthorizedError,
  );
  await client.close();
});

test("a client that speaks only 2026-07-28 connects by OAuth and runs a plan with a review", async ({
  app,
  page,
}) => {
  const provider = new ModernProvider(CALLBACK, "Modern App");
  const connectModern = async () => {
    const client = new ModernClient(
      { name: "oauth-e2e-modern", version: "2.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new ModernTransport(new URL(app.mcpUrl), { authProvider: provider }));
    return client;
  };
  // The 401 leads the v2 client to the metadata, a registration as a native
  // app, and the authorization URL.
  await expect(connectModern()).rejects.toThrow();
  expect(provider.information?.client_id).toMatch(/^cairn_client_/);
  expect((provider.information as { application_type?: string }).application_type).toBe("native");
  expect(provider.authorizationUrl?.searchParams.get("resource")).toBe(app.mcpUrl);

  const callback = await approveInBrowser(page, provider, app.tenantA.email);
  await new ModernTransport(new URL(app.mcpUrl), { authProvider: provider }).finishAuth(callback);
  expect(provider.saved?.access_token).toMatch(/^cairn_at_/);

  const client = await connectModern();
  expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
    // biome-ignore lint/suspicious/noExplicitAny: the tools' structured content, read as the test expects it
    return result.structuredContent as any;
  };
  const { planId } = await call("create_research_plan", {
    name: "Plan via OAuth on 2026-07-28",
    researchQuestion: "Does the new revision work with OAuth?",
    steps: [
      { stepType: "search", instructions: "Search." },
      { stepType: "checkpoint", instructions: "Ask." },
    ],
  });
  const first = await call("get_next_step", { planId });
  await call("submit_step_result", {
    planId,
    stepId: first.step.stepId,
    result: { ok: true },
    stepExecutionReport: {
      thinking: "Searched.",
      webSearches: [],
      webFetches: [],
      otherToolCalls: [],
      subagents: [],
    },
  });
  const checkpoint = await call("get_next_step", { planId });
  await call("request_user_review", { planId, stepId: checkpoint.step.stepId, summary: "Done?" });

  // The person approves on the plan's page; the agent goes on to the end.
  await page.goto(`/plans/${planId}`);
  await expect(page.getByText('app "Modern App" of alpha@example.com').first()).toBeVisible();
  await page.getByTestId("review-panel").getByRole("button", { name: "Approve" }).click();
  await expect
    .poll(async () => (await call("get_next_step", { planId })).status)
    .toBe("plan_complete");
  await client.close();
});
