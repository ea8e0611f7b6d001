/**
 * The front door's order of work, in process: what it answers without touching
 * the body. Its HTTP behaviour against the production build is in
 * tests/mcp-front-door.test.ts.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { type DoorRequest, doorRequest, withFrontDoor } from "./front-door";

const OPTIONS = { maxBodyBytes: 1_000, allowedOrigins: [], corsOrigins: [] };

/** A POST whose body counts how often it is read and never ends. */
function endlessPost(headers: Record<string, string>) {
  let pulls = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls += 1;
      controller.enqueue(new TextEncoder().encode(" "));
    },
  });
  const request = new Request("http://127.0.0.1:3000/api/mcp", {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
    ...({ duplex: "half" } as object),
  });
  return { request, pulls: () => pulls };
}

describe("withFrontDoor", () => {
  const handler = vi.fn(
    async (_request: DoorRequest, _body: unknown, _caller: unknown) => new Response("{}"),
  );
  beforeEach(() => handler.mockClear());

  it("answers no key without asking who it is or reading the body", async () => {
    const authenticate = vi.fn(async () => ({ id: "caller" }));
    const door = withFrontDoor(handler, authenticate, OPTIONS);
    for (const authorization of [undefined, "Bearer", "Bearer   ", "Basic abc"]) {
      const { request, pulls } = endlessPost(authorization ? { Authorization: authorization } : {});
      const response = await door(doorRequest(request), request.body);
      expect(response.status, authorization).toBe(401);
      expect(response.headers.get("www-authenticate"), authorization).toBe("Bearer");
      // A stream may pull once to fill its queue when it is made; the front door
      // never asked for more.
      expect(pulls(), authorization).toBeLessThanOrEqual(1);
    }
    expect(authenticate).not.toHaveBeenCalled();
    expect(handler).not.toHaveBeenCalled();
  });

  it("answers a key that matches nothing with invalid_token, before reading the body", async () => {
    const authenticate = vi.fn(async (_token: string, _request: DoorRequest) => undefined);
    const door = withFrontDoor(handler, authenticate, OPTIONS);
    const { request, pulls } = endlessPost({ Authorization: "Bearer  cairn_wrong " });
    const atDoor = doorRequest(request);
    const response = await door(atDoor, request.body);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(
      'Bearer error="invalid_token", error_description="invalid, expired or revoked token"',
    );
    expect(authenticate).toHaveBeenCalledWith("cairn_wrong", atDoor);
    expect(pulls()).toBeLessThanOrEqual(1);
    expect(handler).not.toHaveBeenCalled();
  });

  it("names the protected-resource metadata in both challenges when it is served", async () => {
    const door = withFrontDoor(handler, async () => undefined, {
      ...OPTIONS,
      resourceMetadataUrl: (request) =>
        `${new URL(request.web().url).origin}/.well-known/oauth-protected-resource/api/mcp`,
    });
    const metadata =
      'resource_metadata="http://127.0.0.1:3000/.well-known/oauth-protected-resource/api/mcp", scope="mcp"';
    const none = await door(doorRequest(endlessPost({}).request), null);
    expect(none.headers.get("www-authenticate")).toBe(`Bearer ${metadata}`);
    const wrong = await door(
      doorRequest(endlessPost({ Authorization: "Bearer nope" }).request),
      null,
    );
    expect(wrong.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", error_description="invalid, expired or revoked token", ${metadata}`,
    );
  });

  it("answers 500, not 401, when the key cannot be checked", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const door = withFrontDoor(
      handler,
      async () => {
        throw new Error("database unreachable");
      },
      OPTIONS,
    );
    const { request } = endlessPost({ Authorization: "Bearer cairn_key" });
    const response = await door(doorRequest(request), request.body);
    expect(response.status).toBe(500);
    expect(response.headers.get("www-authenticate")).toBeNull();
    expect(await response.json()).toMatchObject({ error: { code: -32603 } });
    expect(error).toHaveBeenCalled();
    error.mockRestore();
    expect(handler).not.toHaveBeenCalled();
  });

  it("answers 503 with Retry-After, not 500, while the database is unavailable", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const door = withFrontDoor(
      handler,
      async () => {
        // drizzle's wrapping of postgres.js's error for a connection lost in a failover.
        throw new Error("Failed query: select …", {
          cause: Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED" }),
        });
      },
      OPTIONS,
    );
    const { request } = endlessPost({ Authorization: "Bearer cairn_key" });
    const response = await door(doorRequest(request), request.body);
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("2");
    expect(await response.json()).toMatchObject({
      error: { code: -32000, message: expect.stringMatching(/^The database is unavailable/) },
    });
    expect(warn).toHaveBeenCalled();
    warn.mockRestore();
    expect(handler).not.toHaveBeenCalled();
  });

  it("hands the caller and the parsed body to the handler", async () => {
    const caller = { id: "caller" };
    const door = withFrontDoor(handler, async () => caller, OPTIONS);
    const message = { jsonrpc: "2.0", id: 1, method: "ping" };
    const request = new Request("http://127.0.0.1:3000/api/mcp", {
      method: "POST",
      headers: { Authorization: "Bearer cairn_key", "Content-Type": "application/json" },
      body: JSON.stringify(message),
    });
    const atDoor = doorRequest(request);
    expect((await door(atDoor, request.body)).status).toBe(200);
    expect(handler).toHaveBeenCalledWith(atDoor, message, caller);
  });

  it("answers a listed browser host's preflight and calls with CORS headers, and no other origin's", async () => {
    const host = "https://host.example";
    const door = withFrontDoor(handler, async () => ({ id: "caller" }), {
      ...OPTIONS,
      corsOrigins: [host],
    });
    const ask = (origin: string) =>
      door(
        doorRequest(
          new Request("http://127.0.0.1:3000/api/mcp", {
            method: "OPTIONS",
            headers: {
              Origin: origin,
              "Access-Control-Request-Method": "POST",
              "Access-Control-Request-Headers":
                "authorization, content-type, mcp-protocol-version, mcp-param-region, x-tracking",
            },
          }),
        ),
        null,
      );
    const preflight = await ask(host);
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(host);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("POST");
    // What MCP sends, and nothing else the page asked for.
    expect(preflight.headers.get("access-control-allow-headers")).toBe(
      "authorization, content-type, mcp-protocol-version, mcp-param-region",
    );
    const unlisted = await ask("https://other.example");
    expect(unlisted.status).toBe(403);
    expect(unlisted.headers.get("access-control-allow-origin")).toBeNull();
    // A loopback page may call (no DNS rebinding there), but gets no CORS headers: off by default.
    const loopback = await ask("http://localhost:5173");
    expect(loopback.status).toBe(405);
    expect(loopback.headers.get("access-control-allow-origin")).toBeNull();

    const call = (headers: Record<string, string>) => {
      const request = new Request("http://127.0.0.1:3000/api/mcp", {
        method: "POST",
        headers: { Origin: host, "Content-Type": "application/json", ...headers },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      return door(doorRequest(request), request.body);
    };
    const answered = await call({ Authorization: "Bearer cairn_key" });
    expect(answered.status).toBe(200);
    expect(answered.headers.get("access-control-allow-origin")).toBe(host);
    expect(await answered.text()).toBe("{}");
    // The page can read why it was refused, and where to get a token.
    const refused = await call({});
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe(host);
    expect(refused.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate");
  });
});
