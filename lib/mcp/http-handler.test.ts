/**
 * The route's 2025-era leg, in process: each exchange closes its pooled server
 * without a stack for the SDK's unseen "Connection closed" error, and leaves
 * Node's stack trace limit as it found it. The route over HTTP, in both eras,
 * is tested against the production build (tests/mcp-eras.test.ts and others).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createMcpRoute } from "./http-handler";
import type { McpPrincipal } from "./request-context";

const PRINCIPAL: McpPrincipal = {
  kind: "api_key",
  credentialId: "00000000-0000-4000-8000-000000000001",
  tenantId: "00000000-0000-4000-8000-000000000002",
  userId: "00000000-0000-4000-8000-000000000003",
  label: "test key",
};

const route = createMcpRoute(
  {
    getDb: () => Promise.reject(new Error("a ping reads no database")),
    stallThresholdSeconds: 1800,
    authenticate: async (token) => (token === "key" ? PRINCIPAL : undefined),
  },
  { maxBodyBytes: 10_000, allowedOrigins: [], corsOrigins: [] },
);

function legacyPing(id: number): Request {
  const body = JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
  return new Request("http://127.0.0.1:3000/api/mcp", {
    method: "POST",
    body,
    headers: {
      host: "127.0.0.1:3000",
      authorization: "Bearer key",
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
    },
  });
}

describe("the route's 2025-era leg", () => {
  const limit = Error.stackTraceLimit;
  afterEach(() => {
    Error.stackTraceLimit = limit;
  });

  it("answers on pooled servers, leaving Node's stack trace limit as it was", async () => {
    Error.stackTraceLimit = 17;
    for (let id = 1; id <= 3; id++) {
      const response = await route(legacyPing(id));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ jsonrpc: "2.0", id, result: {} });
      expect(Error.stackTraceLimit).toBe(17);
      expect(new Error("still traced").stack).toMatch(/\n\s+at /);
    }
  });
});
