/**
 * The route's 2025-era leg, in process: its transport
 * (lib/mcp/exchange-transport.ts) answers every request as the SDK's stateless
 * JSON-mode transport answers it, compared request by request; its servers are
 * pooled, one exchange at a time each, and an `initialize` leaves nothing on
 * them. The route over HTTP, in both eras, is tested against the production
 * build (tests/mcp-eras.test.ts and others).
 */
import {
  type AuthInfo,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { describe, expect, it, vi } from "vitest";
import type { Database } from "../db/client";
import { ExchangeTransport } from "./exchange-transport";
import { asResponse, doorRequest } from "./front-door";
import { createMcpRoute, isLegacyEra, newServer } from "./http-handler";
import type { McpPrincipal } from "./request-context";

// How many servers the route has built: each gets Cairn's handlers once.
const built = vi.hoisted(() => ({ servers: 0 }));
vi.mock("./server", async (importOriginal) => {
  const actual = await importOriginal<typeof import("./server")>();
  return {
    ...actual,
    registerCairnServer: (...args: Parameters<typeof actual.registerCairnServer>) => {
      built.servers += 1;
      actual.registerCairnServer(...args);
    },
  };
});

const PRINCIPAL: McpPrincipal = {
  kind: "api_key",
  credentialId: "00000000-0000-4000-8000-000000000001",
  tenantId: "00000000-0000-4000-8000-000000000002",
  userId: "00000000-0000-4000-8000-000000000003",
  label: "test key",
};

const AUTH_INFO: AuthInfo = {
  token: "",
  clientId: PRINCIPAL.credentialId,
  scopes: [],
  extra: { principal: PRINCIPAL },
};

const deps = {
  // `ping` and the protocol's own methods read nothing from it.
  getDb: async () => ({}) as Database,
  stallThresholdSeconds: 1800,
};

function newRoute() {
  const handler = createMcpRoute(
    { ...deps, authenticate: async (token) => (token === "key" ? PRINCIPAL : undefined) },
    { maxBodyBytes: 10_000, allowedOrigins: [], corsOrigins: [] },
  );
  /** The route's answer as the Next route sends it; the door in front of Next writes the same (node-door.test.ts). */
  return async (request: Request) => asResponse(await handler(doorRequest(request), request.body));
}

const route = newRoute();

const HEADERS = {
  host: "127.0.0.1:3000",
  authorization: "Bearer key",
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
};

function post(body: unknown, headers: Record<string, string | undefined> = {}): Request {
  const merged = Object.entries({ ...HEADERS, ...headers }).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  return new Request("http://127.0.0.1:3000/api/mcp", {
    method: "POST",
    body: JSON.stringify(body),
    headers: merged,
  });
}

/** The same request answered by the SDK's own transport, built for it alone, as the route did before. */
async function bySdk(request: Request): Promise<Response> {
  const server = newServer(deps);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, {
      parsedBody: await request.clone().json(),
      authInfo: AUTH_INFO,
    });
  } finally {
    await server.close();
  }
}

async function answerOf(response: Response) {
  const text = await response.text();
  const body = text === "" ? undefined : JSON.parse(text);
  // The answer of `ping` carries the server's clock.
  const serverTime = body?.result?.structuredContent?.serverTime;
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    body: serverTime === undefined ? body : JSON.parse(text.replaceAll(serverTime, "<time>")),
  };
}

const CASES: [string, unknown, Record<string, string | undefined>?][] = [
  ["a tool call", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ping" } }],
  ["a string id", { jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "ping" } }],
  [
    "a request without its revision header",
    { jsonrpc: "2.0", id: 2, method: "ping" },
    { "mcp-protocol-version": undefined },
  ],
  [
    "an older revision",
    { jsonrpc: "2.0", id: 3, method: "ping" },
    { "mcp-protocol-version": "2025-06-18" },
  ],
  [
    "a revision no one speaks",
    { jsonrpc: "2.0", id: 4, method: "ping" },
    { "mcp-protocol-version": "1999-01-01" },
  ],
  [
    "initialize",
    {
      jsonrpc: "2.0",
      id: 5,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    },
    { "mcp-protocol-version": "1999-01-01" },
  ],
  [
    "an initialize without its params",
    { jsonrpc: "2.0", id: 6, method: "initialize" },
    { "mcp-protocol-version": "1999-01-01" },
  ],
  ["a notification", { jsonrpc: "2.0", method: "notifications/initialized" }],
  ["a response from the client", { jsonrpc: "2.0", id: 7, result: {} }],
  ["an unknown method", { jsonrpc: "2.0", id: 9, method: "no/such" }],
  ["an unknown tool", { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "nope" } }],
  ["a tool call without a name", { jsonrpc: "2.0", id: 11, method: "tools/call", params: {} }],
  [
    "an Accept without event streams",
    { jsonrpc: "2.0", id: 12, method: "ping" },
    { accept: "application/json" },
  ],
  ["no Accept", { jsonrpc: "2.0", id: 13, method: "ping" }, { accept: undefined }],
  [
    "a Content-Type that is not JSON",
    { jsonrpc: "2.0", id: 14, method: "ping" },
    { "content-type": "text/plain" },
  ],
  [
    "a JSON Content-Type with a charset",
    { jsonrpc: "2.0", id: 15, method: "ping" },
    { "content-type": "application/json; charset=utf-8" },
  ],
];

/** A request's `_meta` that claims the 2026-07-28 envelope. */
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** Requests the SDK's era decision sends to the 2026-07-28 handler: its answers and its refusals. */
const MODERN_CASES: [string, unknown, Record<string, string | undefined>?][] = [
  [
    "a tool call with the envelope",
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ping", _meta: ENVELOPE } },
    { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "ping" },
  ],
  [
    "the envelope under a 2025 header",
    { jsonrpc: "2.0", id: 2, method: "ping", params: { _meta: ENVELOPE } },
  ],
  [
    "a 2026-07-28 header without the envelope",
    { jsonrpc: "2.0", id: 3, method: "ping" },
    { "mcp-protocol-version": "2026-07-28" },
  ],
  [
    "an Mcp-Method header that contradicts the body",
    { jsonrpc: "2.0", id: 4, method: "ping", params: { _meta: ENVELOPE } },
    { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" },
  ],
  ["a body that is not JSON-RPC", { hello: "world" }],
  ["a JSON null", null],
];

describe("the route's era decision", () => {
  it.each([...CASES, ...MODERN_CASES])(
    "sends %s where the SDK's isLegacyRequest sends it",
    async (_name, body, headers) => {
      const request = post(body, headers);
      expect(isLegacyEra(doorRequest(request), body)).toBe(await isLegacyRequest(request, body));
    },
  );

  it("sends both kinds somewhere: the cases are not all of one era", async () => {
    const legacy = await Promise.all(
      [...CASES, ...MODERN_CASES].map(([, body, headers]) =>
        isLegacyRequest(post(body, headers), body),
      ),
    );
    expect(legacy.filter(Boolean)).toHaveLength(CASES.length);
  });
});

describe("the route's 2025-era leg", () => {
  // Each a request the SDK's era decision sends to this leg (a body that is
  // not a JSON-RPC request of 2025 goes to the 2026-07-28 handler, unchanged).
  it.each(CASES)("answers %s as the SDK's own transport does", async (_name, body, headers) => {
    expect(await isLegacyRequest(post(body, headers), body)).toBe(true);
    const ours = await answerOf(await route(post(body, headers)));
    const theirs = await answerOf(await bySdk(post(body, headers)));
    expect(ours).toEqual(theirs);
  });

  // The era decision sends no such body here; the transport refuses it all the same.
  it.each([
    { hello: "world" },
    { jsonrpc: "1.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", id: null, method: "ping" },
  ])("refuses %j, not a JSON-RPC message, as the SDK's own transport does", async (body) => {
    const ours = asResponse(
      await new ExchangeTransport().exchange(post(body).headers, body, AUTH_INFO),
    );
    expect(await answerOf(ours)).toEqual(await answerOf(await bySdk(post(body))));
  });

  it("answers concurrent calls each with its own answer, the same id from many callers included", async () => {
    const calls = Array.from({ length: 40 }, (_, i) =>
      route(
        post({
          jsonrpc: "2.0",
          id: i % 2 === 0 ? 1 : `call-${i}`,
          method: "tools/call",
          params: { name: "ping" },
        }),
      ).then(async (response) => ({ i, status: response.status, body: await response.json() })),
    );
    for (const { i, status, body } of await Promise.all(calls)) {
      expect(status).toBe(200);
      expect(body.id).toEqual(i % 2 === 0 ? 1 : `call-${i}`);
      expect(body.result.structuredContent.ok).toBe(true);
    }
  });

  it("serves call after call on one pooled server, and each initialize on a server of its own", async () => {
    const fresh = newRoute();
    const before = built.servers;
    const ping = (id: number) =>
      fresh(post({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "ping" } }));
    for (let id = 1; id <= 5; id++) expect((await ping(id)).status).toBe(200);
    expect(built.servers - before).toBe(1);
    const initialize = {
      jsonrpc: "2.0",
      id: 6,
      method: "initialize",
      params: {
        protocolVersion: "2025-03-26",
        capabilities: { elicitation: {} },
        clientInfo: { name: "another client", version: "1" },
      },
    };
    for (let round = 0; round < 2; round++) {
      expect((await fresh(post(initialize))).status).toBe(200);
      expect(built.servers - before).toBe(2 + round);
      // What it declared stays on its own server: the pooled one serves on, and no other is built.
      expect((await ping(7)).status).toBe(200);
      expect(built.servers - before).toBe(2 + round);
    }
    // Two at once: the one pooled server and one more; the initialize's servers were not pooled.
    await Promise.all([ping(8), ping(9)]);
    expect(built.servers - before).toBe(4);
  });

  it("serves one exchange at a time, and drops what a handler sends besides its answer", async () => {
    const transport = new ExchangeTransport();
    const handled: unknown[] = [];
    transport.onmessage = (message) => handled.push(message);
    const request = { jsonrpc: "2.0", id: 1, method: "ping" };
    const answer = transport.exchange(post(request).headers, request, AUTH_INFO);
    expect(handled).toEqual([request]);
    expect(() => transport.exchange(post(request).headers, request, AUTH_INFO)).toThrow(
      /in progress/,
    );
    // A notification or a request to the client has no way back in a stateless JSON exchange.
    await transport.send({ jsonrpc: "2.0", method: "notifications/message", params: {} });
    await transport.send({ jsonrpc: "2.0", id: 99, method: "elicitation/create", params: {} });
    await expect(transport.send({ jsonrpc: "2.0", id: 2, result: {} })).rejects.toThrow(
      /request ID: 2/,
    );
    await transport.send({ jsonrpc: "2.0", id: 1, result: {} });
    expect(asResponse(await answer).status).toBe(200);
    expect(await asResponse(await answer).json()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    // Free again.
    const next = transport.exchange(
      post({ ...request, id: 3 }).headers,
      { ...request, id: 3 },
      AUTH_INFO,
    );
    await transport.send({ jsonrpc: "2.0", id: 3, result: {} });
    expect(await asResponse(await next).json()).toEqual({ jsonrpc: "2.0", id: 3, result: {} });
  });

  it("goes on answering after requests it refused and requests that failed", async () => {
    for (let round = 0; round < 3; round++) {
      expect((await route(post({ hello: "world" }))).status).toBe(400);
      const unknown = await route(post({ jsonrpc: "2.0", id: 1, method: "no/such" }));
      expect((await unknown.json()).error.code).toBe(-32601);
      expect(
        (await route(post({ jsonrpc: "2.0", method: "notifications/initialized" }))).status,
      ).toBe(202);
      const ping = await route(post({ jsonrpc: "2.0", id: 2, method: "ping" }));
      expect(await ping.json()).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    }
  });
});
