/**
 * Checks at /api/mcp before anything else runs, because the SDK's transport
 * makes none of them: a browser page from a foreign origin is refused (DNS rebinding),
 * the API key or OAuth token is checked before a byte of the body is read (a caller without one
 * costs a header check, not a body read and a parse), a body over the limit gets
 * 413 without being read to the end, malformed JSON gets a JSON-RPC parse error
 * at once instead of a hanging request, and a JSON-RPC batch is refused.
 * Browser-based MCP hosts on the origins an admin lists get CORS answers
 * (a preflight, and the headers on every answer); no other site's page does.
 */
import {
  DATABASE_UNAVAILABLE_MESSAGE,
  isDatabaseUnavailable,
  RETRY_AFTER_SECONDS,
} from "../db/unavailable";
import { isAllowedHost, isAllowedOrigin } from "../http/allowed-host";
import { readLimited } from "../http/read-limited";
import { logUnexpected, logWarning } from "../log";

export type FrontDoorOptions = {
  maxBodyBytes: number;
  /** Extra origins (scheme://host[:port]) allowed besides loopback ones. */
  allowedOrigins: readonly string[];
  /** Origins whose pages may call the route cross-origin (CAIRN_MCP_CORS_ORIGINS); empty: none. */
  corsOrigins: readonly string[];
  /**
   * The URL of the route's OAuth Protected Resource Metadata (RFC 9728) for a
   * request, named in every 401 challenge so an OAuth client can discover how
   * to get a token; undefined leaves it out.
   */
  resourceMetadataUrl?: (request: DoorRequest) => string | undefined;
};

/** A request's headers as the door reads them: one by (lower-case) name. */
export type HeaderReader = { get(name: string): string | null };

/**
 * A request at the MCP door: its method and headers, and the web `Request`
 * only where one is needed (the SDK's 2026-07-28 handler takes one). Next's
 * route hands its own (`doorRequest`); the door in front of Next reads Node's
 * request's headers where they are, so a 2025-era call builds no `Request`
 * (lib/mcp/node-door.ts).
 */
export type DoorRequest = {
  readonly method: string;
  readonly headers: HeaderReader;
  /** The request as a web `Request`; its body is the door's to read, never this one's. */
  web(): Request;
};

/** A web `Request` at the door (Next's route): its body is read from `request.body`. */
export function doorRequest(request: Request): DoorRequest {
  return { method: request.method, headers: request.headers, web: () => request };
}

/** Looks up who a bearer token belongs to; undefined for a wrong, revoked or expired one. */
export type Authenticate<Caller> = (
  bearerToken: string,
  request: DoorRequest,
) => Promise<Caller | undefined>;

// RFC 6750 §3.1: a request without credentials gets a challenge with no error
// code; a key or token that matches nothing gets invalid_token. Both name the
// protected-resource metadata (RFC 9728 §5.1) and the scope, which is where an
// MCP client starts the OAuth flow.
function challenge(request: DoorRequest, options: FrontDoorOptions, invalid: boolean): string {
  const parts: string[] = [];
  if (invalid) {
    parts.push('error="invalid_token"', 'error_description="invalid, expired or revoked token"');
  }
  const metadata = options.resourceMetadataUrl?.(request);
  if (metadata) parts.push(`resource_metadata="${metadata}"`, 'scope="mcp"');
  return parts.length === 0 ? "Bearer" : `Bearer ${parts.join(", ")}`;
}

/** A JSON-RPC error answer with no request id, as a transport refuses a request before reading it. */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: HeadersInit = {},
) {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }), {
    status,
    headers: { "Content-Type": "application/json", ...headers },
  });
}

/** The token of an `Authorization: Bearer <token>` header; undefined when there is none. */
function bearerTokenOf(authorization: string | null): string | undefined {
  const match = authorization === null ? null : /^Bearer\s+(.+)$/i.exec(authorization.trim());
  return match?.[1]?.trim() || undefined;
}

/** The request headers MCP clients send: the protocol's own, and 2026-07-28's mirrored parameters. */
const MCP_REQUEST_HEADERS = new Set([
  "authorization",
  "content-type",
  "accept",
  "last-event-id",
  "mcp-protocol-version",
  "mcp-session-id",
  "mcp-method",
  "mcp-name",
  "mcp-wire-codec",
]);
const MCP_PARAM_HEADER_PREFIX = "mcp-param-";

/**
 * A preflight's answer for a listed origin: the headers it asked for that MCP
 * uses (a wildcard would not cover Authorization), POST as the one method.
 */
function preflight(request: DoorRequest, origin: string): Response {
  const asked = (request.headers.get("access-control-request-headers") ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => MCP_REQUEST_HEADERS.has(name) || name.startsWith(MCP_PARAM_HEADER_PREFIX));
  return new Response(null, {
    status: 204,
    headers: {
      "Access-Control-Allow-Origin": origin,
      "Access-Control-Allow-Methods": "POST",
      "Access-Control-Allow-Headers": asked.join(", "),
      "Access-Control-Max-Age": "600",
      Vary: "Origin",
    },
  });
}

/** An answer to a listed origin, readable by its page: the body and the headers a client reads. */
function withCors(response: Response, origin: string): Response {
  const headers = new Headers(response.headers);
  headers.set("Access-Control-Allow-Origin", origin);
  headers.set(
    "Access-Control-Expose-Headers",
    "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version, Retry-After",
  );
  headers.append("Vary", "Origin");
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/**
 * A JSON-RPC answer as its JSON text, which the MCP door in front of Next
 * writes as it is (lib/mcp/node-door.ts): a web `Response` would build a
 * stream for the body, and the door read it back (docs/performance.md, "One
 * transport per pooled server"). Anywhere else it becomes a `Response`
 * (`asResponse`).
 */
export type JsonAnswer = { status: number; json: string };

/** What the route answers: a web `Response`, or a JSON-RPC answer as text. */
export type McpAnswer = Response | JsonAnswer;

/**
 * Told apart by shape, not by `instanceof Response`: the door in front of Next
 * (server.ts's bundle) meets answers made in Next's bundle.
 */
export function isJsonAnswer(answer: McpAnswer): answer is JsonAnswer {
  return typeof (answer as Partial<JsonAnswer>).json === "string";
}

export function asResponse(answer: McpAnswer): Response {
  if (!isJsonAnswer(answer)) return answer;
  return new Response(answer.json, {
    status: answer.status,
    headers: { "Content-Type": "application/json" },
  });
}

/**
 * The MCP route's handler: a request, and its body (a web `Request`'s stream,
 * or Node's request itself at the MCP door in front of Next, so no web stream
 * is built for it; lib/mcp/node-door.ts).
 */
export type McpRouteHandler = (
  request: DoorRequest,
  body: AsyncIterable<Uint8Array> | null,
) => Promise<McpAnswer>;

/**
 * Wraps the MCP handler. Requests that pass reach it with their caller and the
 * body already read and parsed, so nothing after the front door reads or parses
 * it again.
 */
export function withFrontDoor<Caller, Answer extends McpAnswer>(
  handler: (request: DoorRequest, body: unknown, caller: Caller) => Promise<Answer>,
  authenticate: Authenticate<Caller>,
  options: FrontDoorOptions,
): (request: DoorRequest, body: AsyncIterable<Uint8Array> | null) => Promise<Answer | Response> {
  const checked = checkedRequest(handler, authenticate, options);
  return async (request, body) => {
    const origin = request.headers.get("origin");
    const cors = origin !== null && options.corsOrigins.includes(origin) ? origin : undefined;
    if (cors === undefined) return checked(request, origin, body);
    if (request.method === "OPTIONS") return preflight(request, cors);
    return withCors(asResponse(await checked(request, origin, body)), cors);
  };
}

function checkedRequest<Caller, Answer extends McpAnswer>(
  handler: (request: DoorRequest, body: unknown, caller: Caller) => Promise<Answer>,
  authenticate: Authenticate<Caller>,
  options: FrontDoorOptions,
): (
  request: DoorRequest,
  origin: string | null,
  body: AsyncIterable<Uint8Array> | null,
) => Promise<Answer | Response> {
  const origins = [...options.allowedOrigins, ...options.corsOrigins];
  return async (request, origin, source) => {
    if (origin !== null && !isAllowedOrigin(origin, origins)) {
      return jsonRpcError(403, -32000, `Forbidden: origin ${origin} may not call this server.`);
    }
    const host = request.headers.get("host");
    if (host !== null && !isAllowedHost(host, options.allowedOrigins)) {
      return jsonRpcError(
        403,
        -32000,
        `Forbidden: host ${host} is not an allowed address of this server (set CAIRN_ALLOWED_ORIGINS).`,
      );
    }
    if (request.method !== "POST") {
      // Stateless Streamable HTTP: no server-initiated stream (GET) and no session to end (DELETE).
      return jsonRpcError(405, -32000, "Method not allowed: send JSON-RPC messages with POST.", {
        Allow: "POST",
      });
    }

    // Only headers so far: whoever sends no key or a wrong one is answered before
    // the body is read, however long or slow it is.
    const token = bearerTokenOf(request.headers.get("authorization"));
    if (token === undefined) {
      return jsonRpcError(
        401,
        -32000,
        "Unauthorized: send an API key or OAuth access token as `Authorization: Bearer <token>` (never in the URL).",
        { "WWW-Authenticate": challenge(request, options, false) },
      );
    }
    let caller: Caller | undefined;
    try {
      caller = await authenticate(token, request);
    } catch (error) {
      // The key could not be checked; a 401 would tell the client its key is
      // bad when it may not be. A database failing over is worth a retry (503).
      if (isDatabaseUnavailable(error)) {
        logWarning("Could not check an API key", error);
        return jsonRpcError(503, -32000, DATABASE_UNAVAILABLE_MESSAGE, {
          "Retry-After": String(RETRY_AFTER_SECONDS),
        });
      }
      logUnexpected("Could not check an API key", error);
      return jsonRpcError(500, -32603, "Internal error: the API key could not be checked.");
    }
    if (caller === undefined) {
      return jsonRpcError(401, -32000, "Unauthorized: invalid, expired or revoked key or token.", {
        "WWW-Authenticate": challenge(request, options, true),
      });
    }

    const tooLarge = () =>
      jsonRpcError(
        413,
        -32600,
        `Request body is larger than the limit of ${options.maxBodyBytes} bytes.`,
      );
    const declared = Number(request.headers.get("content-length") ?? "0");
    if (declared > options.maxBodyBytes) return tooLarge();
    const body = await readLimited(source, options.maxBodyBytes);
    if (body === undefined) return tooLarge();
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return jsonRpcError(400, -32700, "Parse error: the request body is not valid JSON.");
    }
    // MCP dropped JSON-RPC batching in 2025-06-18, yet the SDK's transport still
    // runs every element of an array: one request could carry thousands of tool
    // calls. Refused whatever revision the client negotiated.
    if (Array.isArray(parsed)) {
      return jsonRpcError(
        400,
        -32600,
        "Invalid Request: batches are not supported by this protocol revision; send one message per request.",
      );
    }
    return handler(request, parsed, caller);
  };
}
