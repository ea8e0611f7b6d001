/**
 * The production server's own /api/mcp door (server.ts, lib/mcp/node-door.ts)
 * answers as the App Router route does. Until Next has loaded the route, the
 * server hands /api/mcp to Next; from then on the door answers. So each kind
 * of request is sent to a freshly started server twice: the first answer is
 * Next's, the second the door's, and a client must not be able to tell them
 * apart (the framing aside: the door writes a complete answer with its length).
 * Everything else about the route is tested through the door by the other
 * tests/mcp-*.test.ts files, which run against the same server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";

const CORS_ORIGIN = "https://host.example";

/** Headers that describe the connection or the moment, not the answer. */
const FRAMING = new Set([
  "date",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
]);

type Answer = { status: number; headers: Record<string, string>; body: string; length?: string };

async function ask(url: string, init: RequestInit): Promise<Answer> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) if (!FRAMING.has(name)) headers[name] = value;
  const length = response.headers.get("content-length") ?? undefined;
  return { status: response.status, headers, body: await response.text(), length };
}

describe.each(BACKENDS)("the MCP door of the production server on %s", (backend) => {
  let app: AppServer;
  const requests: [string, (app: AppServer) => RequestInit][] = [
    [
      "an initialize with a key",
      (app) => ({
        method: "POST",
        headers: {
          Authorization: `Bearer ${app.tenantA.key}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "door-test", version: "1" },
          },
        }),
      }),
    ],
    [
      "a call with no key (401 and its challenge)",
      () => ({
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      }),
    ],
    [
      "a listed browser host's CORS preflight",
      () => ({
        method: "OPTIONS",
        headers: {
          Origin: CORS_ORIGIN,
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
        },
      }),
    ],
    [
      "a GET (no stream offered)",
      (app) => ({ method: "GET", headers: { Authorization: `Bearer ${app.tenantA.key}` } }),
    ],
  ];

  beforeAll(async () => {
    app = await startAppServer(backend, { env: { CAIRN_MCP_CORS_ORIGINS: CORS_ORIGIN } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it.each(requests)("answers %s as the route does", async (_kind, request) => {
    // A fresh server: its first /api/mcp request loads the route in Next and is Next's.
    await app.stopServer();
    await app.startServer();
    const { length: _, ...byNext } = await ask(app.mcpUrl, request(app));
    const { length, ...byDoor } = await ask(app.mcpUrl, request(app));
    expect(byDoor).toEqual(byNext);
    // The door's answer, whole and with its length.
    if (byDoor.body !== "") expect(length).toBe(String(Buffer.byteLength(byDoor.body)));
    expect(byDoor.headers["content-security-policy"]).toBe(
      "default-src 'none'; frame-ancestors 'none'",
    );
  });

  it("leaves other methods and paths to Next", async () => {
    const head = await fetch(app.mcpUrl, { method: "HEAD" });
    const put = await fetch(app.mcpUrl, { method: "PUT" });
    expect(put.status).toBe(405);
    expect(head.status).toBe((await fetch(app.mcpUrl, { method: "GET" })).status);
    const slash = await fetch(`${app.mcpUrl}/`, { method: "POST", redirect: "manual" });
    expect(slash.status).toBe(308);
  });
});
