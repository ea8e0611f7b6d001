/**
 * The production server's PostgreSQL going away and coming back (a server of
 * its own, stopped as a crash stops it: its processes killed, no checkpoint).
 * While it is down, an MCP call with a valid API key is answered by the front
 * door, whose key check cannot reach the database, with HTTP 503 and
 * Retry-After at once: never a 500, a 401 or a hang. Once PostgreSQL is back,
 * calls succeed again without restarting the server.
 */
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_UNAVAILABLE_MESSAGE, RETRY_AFTER_SECONDS } from "@/lib/db/unavailable";
import { type AppServer, startAppServer } from "./support/app-server";
import { type Agent, connectAgent } from "./support/mcp-client";
import { type PostgresServer, startPostgres } from "./support/postgres-server";

/** tools/call as one raw request with a valid key, to read the HTTP answer itself. */
function callTool(app: AppServer, name: string, args: Record<string, unknown>) {
  return fetch(app.mcpUrl, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      Authorization: `Bearer ${app.tenantA.key}`,
      "MCP-Protocol-Version": "2025-11-25",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name, arguments: args },
    }),
    // A hang fails the test here, well before vitest's own timeout.
    signal: AbortSignal.timeout(20_000),
  });
}

const newPlan = (name: string) => ({
  name,
  researchQuestion: "q",
  steps: [{ stepType: "search", instructions: "Look." }],
});

describe("the production server's PostgreSQL down and back", () => {
  let pg: PostgresServer;
  let app: AppServer | undefined;
  let agent: Agent | undefined;

  beforeAll(async () => {
    pg = await startPostgres();
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe("create database cairn_down");
    } finally {
      await admin.end();
    }
    app = await startAppServer("postgres", {
      databaseUrl: pg.url.replace(/\/[^/]*$/, "/cairn_down"),
    });
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    try {
      await agent?.close();
      await app?.stop();
    } finally {
      pg?.stop();
    }
  });

  it("answers 503 with Retry-After while it is down, and serves again once it is back", async () => {
    if (!app || !agent) throw new Error("no server");
    await agent.ok("create_research_plan", newPlan("Before"));

    pg.crash();
    const sentAt = Date.now();
    const refused = await callTool(app, "create_research_plan", newPlan("While down"));
    const answeredIn = Date.now() - sentAt;
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe(String(RETRY_AFTER_SECONDS));
    expect(await refused.json()).toMatchObject({
      jsonrpc: "2.0",
      error: { code: -32000, message: DATABASE_UNAVAILABLE_MESSAGE },
    });
    // Connecting is refused at once; within the connect timeout (5 s) at worst.
    expect(answeredIn).toBeLessThan(6_000);
    // The SDK client meets the same answer as an HTTP error.
    await expect(agent.call("list_active_plans")).rejects.toMatchObject({ code: 503 });

    pg.start();
    const upAt = Date.now();
    // The first call may still meet a connection closed by the crash: the retryable answer.
    await expect
      .poll(async () => (await callTool(app as AppServer, "list_active_plans", {})).status, {
        timeout: 15_000,
        interval: 100,
      })
      .toBe(200);
    console.info(
      `Database down: 503 answered in ${answeredIn} ms; back: first call served ${Date.now() - upAt} ms after PostgreSQL started.`,
    );
    const after = await agent.ok("create_research_plan", newPlan("After"));
    const listed = await agent.ok("list_active_plans");
    const names = listed.plans.map((plan: { name: string }) => plan.name);
    expect(names).toEqual(expect.arrayContaining(["Before", "After"]));
    expect(names).not.toContain("While down");
    expect((await agent.ok("get_plan_status", { planId: after.planId })).planId).toBe(after.planId);
    // Nothing was logged as unexpected (an error with its stack).
    expect(app.serverOutput()).not.toMatch(/^\s+at /m);
  }, 60_000);
});
