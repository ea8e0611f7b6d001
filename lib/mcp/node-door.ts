/**
 * /api/mcp answered from Node's own request and response, without Next's
 * request handling (docs/performance.md, "The MCP door in front of Next"). The
 * production server (server.ts) hands this path's requests here and every other
 * request to Next. The handler is the one Next's bundle of app/api/mcp/route.ts
 * built, published on globalThis when that module loads, so the door and the
 * rest of the app share one database handle, credential cache, tool-call log
 * and notification runtime: this file only hands the handler Node's request
 * (its headers read where they are, its body read from it; a web `Request` is
 * built only for the 2026-07-28 leg, which takes one) and writes its answer,
 * with the headers next.config.ts gives every API answer.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { NON_PAGE_CSP, SECURITY_HEADERS } from "../web/security-headers";
import { type DoorRequest, isJsonAnswer, type McpAnswer, type McpRouteHandler } from "./front-door";

export const MCP_PATH = "/api/mcp";

export type McpDoor = {
  /** The route's handler (createMcpRoute, lib/mcp/http-handler.ts). */
  handle: McpRouteHandler;
  /** Settles once every tool-call log row recorded so far is written (never rejects). */
  written(): Promise<void>;
};

// On globalThis because the route's module lives in Next's bundle and the
// server that reads it does not import that bundle.
const slot = globalThis as typeof globalThis & { __cairnMcpDoor?: McpDoor };

export function publishMcpDoor(door: McpDoor): void {
  slot.__cairnMcpDoor = door;
}

/** Undefined until Next has loaded the route's module (its first request, served by Next). */
export function publishedMcpDoor(): McpDoor | undefined {
  return slot.__cairnMcpDoor;
}

/** The methods the route exports; any other (HEAD, PUT, ...) gets Next's own answer. */
const DOOR_METHODS = new Set(["POST", "GET", "DELETE", "OPTIONS"]);

/** Exactly the route's path (a query string allowed): `/api/mcp/` and the rest are Next's. */
export function isMcpDoorRequest(request: IncomingMessage): boolean {
  if (request.method === undefined || !DOOR_METHODS.has(request.method)) return false;
  const url = request.url ?? "";
  const query = url.indexOf("?");
  return (query === -1 ? url : url.slice(0, query)) === MCP_PATH;
}

/**
 * What Next sets on a route's answer before the route's own headers:
 * next.config.ts's headers for `/api/:path*`, and the Vary of every App Router
 * answer (a cache in front may key on it).
 */
const FIXED_HEADERS: [string, string][] = [
  ...SECURITY_HEADERS.map(({ key, value }): [string, string] => [key, value]),
  ["Content-Security-Policy", NON_PAGE_CSP],
  ["vary", "rsc, next-router-state-tree, next-router-prefetch, next-router-segment-prefetch"],
];

/** The framing is the server's to choose, as Next drops these from a route's answer. */
const FRAMING_HEADERS = new Set(["content-length", "content-encoding", "transfer-encoding"]);
/** Headers a route's answer adds to Next's rather than leaves to them, as Next merges them. */
const MERGED_HEADERS = new Set(["set-cookie", "www-authenticate", "proxy-authenticate", "vary"]);

function setHeaders(response: Response, res: ServerResponse): void {
  res.statusCode = response.status;
  for (const [name, value] of FIXED_HEADERS) res.setHeader(name, value);
  for (const cookie of response.headers.getSetCookie()) res.appendHeader("set-cookie", cookie);
  for (const [name, value] of response.headers) {
    if (name === "set-cookie" || FRAMING_HEADERS.has(name)) continue;
    if (MERGED_HEADERS.has(name) || res.getHeader(name) === undefined) {
      res.appendHeader(name, value);
    }
  }
}

/**
 * Node's request at the door. A header's value is what a web `Request` built
 * from it would give (Node has lower-cased the names and joined repeated
 * values), read without building one: a `Request` and its `Headers` were about
 * a twentieth of a 2025-era call's CPU in the server (docs/performance.md,
 * "A call without a web Request").
 */
function doorRequestOf(request: IncomingMessage): DoorRequest {
  const headers = request.headers;
  return {
    method: request.method ?? "GET",
    headers: {
      get(name) {
        const value = headers[name.toLowerCase()];
        if (value === undefined) return null;
        return typeof value === "string" ? value : value.join(", ");
      },
    },
    web: () => toRequest(request),
  };
}

/**
 * Node's request as a web `Request` (for the 2026-07-28 leg), with no `AbortSignal`: nothing Cairn's
 * handler does stops for a client that goes away (a call's transaction
 * commits or not on its own, and its answer is then dropped), and an event
 * stream is cancelled from the response's side (`writeResponse`), which ends
 * the SDK's stream as the signal did. A signal cost every request about 45 µs
 * of the server's CPU (undici registers each one for garbage collection;
 * docs/performance.md, "The server's CPU per call against `c5c24c9`").
 *
 * And with no body: the handler reads Node's request itself (`serveMcpDoor`),
 * with the front door's size limit, so no web stream is built for the body
 * and read back (docs/performance.md, "The body read from Node's request").
 */
function toRequest(request: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  // As Next builds request.url: the scheme a proxy forwarded, the Host header.
  const scheme = request.headers["x-forwarded-proto"] === "https" ? "https" : "http";
  const path = request.url ?? MCP_PATH;
  const asSent = `${scheme}://${request.headers.host ?? "localhost"}${path}`;
  // A Host that makes no URL ("a b", a port past 65535) would throw in `new
  // Request`: the route reads the host from the headers, not the URL, so it
  // still gets the request and refuses that Host itself, as behind Next.
  const url = URL.canParse(asSent) ? asSent : `${scheme}://localhost${path}`;
  return new Request(url, { method: request.method, headers });
}

async function writeResponse(
  answer: McpAnswer,
  res: ServerResponse,
  closed: () => boolean,
): Promise<void> {
  if (isJsonAnswer(answer)) {
    // A JSON-RPC answer as text: written whole, with its length, as `asResponse` would send it.
    res.statusCode = answer.status;
    for (const [name, value] of FIXED_HEADERS) res.setHeader(name, value);
    res.setHeader("content-type", "application/json");
    res.end(answer.json);
    return;
  }
  setHeaders(answer, res);
  if (answer.body === null) {
    res.end();
    return;
  }
  const reader = answer.body.getReader();
  // An event stream (a 2026-07-28 subscription, a GET stream) is written as it
  // comes; any other answer is complete when returned (JSON mode), so it is
  // written whole, with its length, in one write.
  if (answer.headers.get("content-type")?.startsWith("text/event-stream")) {
    res.flushHeaders();
    // A client that goes away ends the stream at once, even one with nothing
    // more to send: its source is cancelled (the SDK's teardown) and the read ends.
    const cancel = () => void reader.cancel().catch(() => {});
    res.once("close", cancel);
    if (closed()) cancel();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      res.write(chunk.value);
    }
    res.off("close", cancel);
    res.end();
    return;
  }
  const chunks: Uint8Array[] = [];
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    chunks.push(chunk.value);
  }
  res.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
}

/**
 * Answers one /api/mcp request. A handler that throws answers 500, as Next's
 * route would, and the server goes on; an event stream to a client that
 * disconnects is cancelled.
 */
export async function serveMcpDoor(
  door: McpDoor,
  request: IncomingMessage,
  res: ServerResponse,
  logError: (error: unknown) => void,
): Promise<void> {
  let closed = false;
  res.once("close", () => {
    closed = true;
  });
  try {
    // Node's request is the body, read as it streams in, so the front door's
    // size limit stops reading one that is too large.
    const hasBody = request.method === "POST" || request.method === "DELETE";
    const response = await door.handle(doorRequestOf(request), hasBody ? request : null);
    await writeResponse(response, res, () => closed);
  } catch (error) {
    if (closed) return;
    logError(error);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // Nothing of an answer that failed while being read (its headers) goes out with the 500.
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    res.statusCode = 500;
    for (const [name, value] of FIXED_HEADERS) res.setHeader(name, value);
    res.end();
  }
}
