/**
 * The door's conversion between Node's request and response and the route's
 * web ones, over a real node:http server: what a client receives for a JSON
 * answer, an event stream, a thrown handler and a client that goes away. The
 * route's own behaviour behind it is tested over the production server in
 * tests/mcp-*.test.ts and tests/mcp-node-door.test.ts.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { readLimited } from "../http/read-limited";
import { isMcpDoorRequest, type McpDoor, serveMcpDoor } from "./node-door";

let server: Server | undefined;
const errors: unknown[] = [];

async function serve(handle: McpDoor["handle"]): Promise<string> {
  const door: McpDoor = { handle, written: async () => {} };
  server = createServer((request, response) => {
    void serveMcpDoor(door, request, response, (error) => errors.push(error));
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/mcp`;
}

async function stop(): Promise<void> {
  const running = server;
  server = undefined;
  if (!running) return;
  running.closeAllConnections();
  await new Promise((resolve) => running.close(resolve));
}

afterEach(async () => {
  errors.length = 0;
  await stop();
});

describe("the MCP door on Node's request and response", () => {
  it("takes the route's four methods on exactly its path, and nothing else", () => {
    const asked = (method: string, url: string) => ({ method, url }) as IncomingMessage;
    for (const method of ["POST", "GET", "DELETE", "OPTIONS"]) {
      expect(isMcpDoorRequest(asked(method, "/api/mcp"))).toBe(true);
    }
    expect(isMcpDoorRequest(asked("POST", "/api/mcp?x=1"))).toBe(true);
    expect(isMcpDoorRequest(asked("HEAD", "/api/mcp"))).toBe(false);
    expect(isMcpDoorRequest(asked("PUT", "/api/mcp"))).toBe(false);
    expect(isMcpDoorRequest(asked("POST", "/api/mcp/"))).toBe(false);
    expect(isMcpDoorRequest(asked("POST", "/api/mcpx"))).toBe(false);
    expect(isMcpDoorRequest(asked("GET", "/"))).toBe(false);
  });

  it("hands the handler the request as sent, its body as Node's stream, and returns its answer with the API headers", async () => {
    const url = await serve(async (request, source) => {
      // The body comes as Node's request, read as it streams in: the web
      // request carries none, so no web stream is built for it.
      const web = request.web();
      expect(web.body).toBeNull();
      // The door's headers read as the web request's do, whatever the name's case.
      for (const name of ["authorization", "Authorization", "x-repeated", "content-type", "none"]) {
        expect(request.headers.get(name), name).toBe(web.headers.get(name));
      }
      expect(request.headers.get("X-Repeated")).toBe("one, two");
      const body = await readLimited(source ?? null, 1_000_000);
      return Response.json(
        {
          method: request.method,
          url: web.url,
          auth: request.headers.get("authorization"),
          body,
        },
        { status: 202, headers: { "mcp-session-id": "s1", "set-cookie": "a=1" } },
      );
    });
    const headers = new Headers({ authorization: "Bearer k", "content-type": "application/json" });
    headers.append("x-repeated", "one");
    headers.append("x-repeated", "two");
    const response = await fetch(`${url}?q=1`, {
      method: "POST",
      headers,
      body: '{"jsonrpc":"2.0"}',
    });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({
      method: "POST",
      url: `${url}?q=1`,
      auth: "Bearer k",
      body: '{"jsonrpc":"2.0"}',
    });
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("mcp-session-id")).toBe("s1");
    expect(response.headers.get("set-cookie")).toBe("a=1");
    // next.config.ts's headers for /api/*, which Next would have set.
    expect(response.headers.get("content-security-policy")).toBe(
      "default-src 'none'; frame-ancestors 'none'",
    );
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
    expect(response.headers.get("permissions-policy")).toContain("camera=()");
    // A complete answer is written whole, with its length.
    expect(response.headers.get("content-length")).toBe(
      String(
        Buffer.byteLength(
          JSON.stringify({
            method: "POST",
            url: `${url}?q=1`,
            auth: "Bearer k",
            body: '{"jsonrpc":"2.0"}',
          }),
        ),
      ),
    );
  });

  it("writes a JSON-RPC answer given as text as its web Response would be written", async () => {
    const json = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { text: "é ✓" } });
    const received = async (handle: McpDoor["handle"]) => {
      const url = await serve(handle);
      const response = await fetch(url, { method: "POST", body: "{}" });
      const headers = Object.fromEntries(
        [...response.headers].filter(([name]) => name !== "date" && name !== "keep-alive"),
      );
      const answer = { status: response.status, headers, body: await response.text() };
      await stop();
      return answer;
    };
    const asText = await received(async () => ({ status: 200, json }));
    const asResponse = await received(async () =>
      Response.json(JSON.parse(json), { headers: { "Content-Type": "application/json" } }),
    );
    expect(asText).toEqual(asResponse);
    expect(asText.body).toBe(json);
    expect(asText.headers["content-length"]).toBe(String(Buffer.byteLength(json)));
    expect(asText.headers["x-frame-options"]).toBe("DENY");
  });

  it("hands on a request whose Host makes no URL, for the route to refuse, instead of failing", async () => {
    const url = new URL(
      await serve(async (request) => Response.json({ host: request.headers.get("host") })),
    );
    for (const host of ["a b", "127.0.0.1:99999"]) {
      const answer = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
        const sent = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: "POST",
            headers: { host },
          },
          (response) => {
            let body = "";
            response.on("data", (chunk) => {
              body += chunk;
            });
            response.on("end", () => resolve({ status: response.statusCode, body }));
          },
        );
        sent.on("error", reject);
        sent.end();
      });
      expect(answer).toEqual({ status: 200, body: JSON.stringify({ host }) });
    }
    expect(errors).toEqual([]);
  });

  it("streams an event stream as it is written, before it ends", async () => {
    let finish: () => void = () => {};
    const ended = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const url = await serve(async () => {
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(encoder.encode("event: message\ndata: first\n\n"));
          await ended;
          controller.enqueue(encoder.encode("event: message\ndata: last\n\n"));
          controller.close();
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const response = await fetch(url, { headers: { accept: "text/event-stream" } });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    // The first event arrives while the handler still holds the stream open.
    expect(decoder.decode((await reader.read()).value)).toBe("event: message\ndata: first\n\n");
    finish();
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      rest += decoder.decode(chunk.value);
    }
    expect(rest).toBe("event: message\ndata: last\n\n");
  });

  it("answers 500 when the handler throws, logs it, and goes on serving", async () => {
    let calls = 0;
    const url = await serve(async () => {
      calls += 1;
      if (calls === 1) throw new Error("the handler broke");
      return new Response(null, { status: 204 });
    });
    const failed = await fetch(url, { method: "POST", body: "{}" });
    expect(failed.status).toBe(500);
    expect(failed.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await failed.text()).toBe("");
    expect(errors).toEqual([new Error("the handler broke")]);
    expect((await fetch(url, { method: "POST", body: "{}" })).status).toBe(204);
  });

  it("answers 500 without the answer's own headers when its body fails while read", async () => {
    const url = await serve(async () => {
      const body = new ReadableStream<Uint8Array>({
        pull: (controller) => controller.error(new Error("the body broke")),
      });
      return new Response(body, {
        headers: { "content-type": "application/json", "x-route": "1" },
      });
    });
    const failed = await fetch(url, { method: "POST", body: "{}" });
    expect(failed.status).toBe(500);
    expect(failed.headers.get("content-type")).toBeNull();
    expect(failed.headers.get("x-route")).toBeNull();
    expect(failed.headers.get("content-security-policy")).toBe(
      "default-src 'none'; frame-ancestors 'none'",
    );
    expect(errors).toEqual([new Error("the body broke")]);
  });

  it("stops the stream when the client goes away", async () => {
    let cancelled: (reason: unknown) => void = () => {};
    const cancelSeen = new Promise((resolve) => {
      cancelled = resolve;
    });
    const url = await serve(async () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("event: message\ndata: open\n\n"));
        },
        cancel: () => cancelled("cancelled"),
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    await new Promise<void>((resolve, reject) => {
      const client = httpRequest(url, { method: "GET" }, (response) => {
        response.once("data", () => {
          client.destroy();
          resolve();
        });
      });
      client.on("error", (error) => {
        if (!client.destroyed) reject(error);
      });
      client.end();
    });
    // Though the stream has nothing more to send, its source is told.
    expect(await cancelSeen).toBe("cancelled");
    expect(errors).toEqual([]);
  });
});
