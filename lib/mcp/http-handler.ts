/**
 * /api/mcp: the front door (which also checks the API key, before reading the
 * body), then the official SDK v2's `createMcpHandler`, which decides per
 * request which protocol era the request speaks: a request that carries the
 * 2026-07-28 `_meta` envelope is served natively (no handshake, no session,
 * `server/discover`, `resultType`, cache hints, header/body checks, -32022 for
 * a revision the SDK does not serve), and anything else as the SDK's stateless
 * Streamable HTTP transport serves it, which speaks 2025-11-25 and the
 * revisions the SDK still negotiates below it (here on a transport of Cairn's
 * that stays connected to its pooled server, lib/mcp/exchange-transport.ts).
 * One route, one set of handlers, both eras.
 *
 * Why not `createMcpHandler` of `mcp-handler` (the maintained successor of
 * `@vercel/mcp-adapter`), though it wraps this same SDK entry: it constructs a
 * new McpServer for every request, with no way to hand one in, and it reads
 * the body again from a clone of the request (which the front door has
 * already read). Building servers per request was measured as half of the
 * door's per-call cost. Here the body is parsed once by the front door and
 * handed over, and the factory the SDK calls once per request hands out a
 * pooled server with Cairn's handlers already attached (the tool list and its
 * JSON Schemas are built once per process, lib/mcp/server.ts).
 */
import {
  type AuthInfo,
  classifyInboundRequest,
  createMcpHandler,
  McpServer,
  ProtocolError,
} from "@modelcontextprotocol/server";
import { logUnexpected } from "../log";
import { ExchangeTransport } from "./exchange-transport";
import {
  type DoorRequest,
  type FrontDoorOptions,
  type HeaderReader,
  type McpAnswer,
  type McpRouteHandler,
  withFrontDoor,
} from "./front-door";
import type { McpPrincipal } from "./request-context";
import { reviewFormState } from "./review-in-client";
import {
  type CairnServerDeps,
  registerCairnServer,
  SERVER_CACHE_HINTS,
  SERVER_CAPABILITIES,
  SERVER_INFO,
  SERVER_INSTRUCTIONS,
} from "./server";

export type McpRouteDeps = CairnServerDeps & {
  /** The API key's or OAuth token's principal; undefined for a wrong, revoked or expired one. */
  authenticate(bearerToken: string, request: DoorRequest): Promise<McpPrincipal | undefined>;
};

/** Idle servers kept for reuse per era: about the requests served at once, no more. */
const MAX_IDLE_SERVERS = 64;

export function createMcpRoute(deps: McpRouteDeps, frontDoor: FrontDoorOptions): McpRouteHandler {
  // A pooled server carries nothing from one request to the next: the
  // handlers take the caller from each request's auth info, the SDK sets a
  // 2026-07-28 request's revision and client identity on the server before
  // each exchange, and a 2025-era `initialize` is answered on a server of its
  // own (below). The eras are pooled apart because the SDK installs
  // the modern-only handlers (server/discover) on a server it serves a
  // 2026-07-28 request with, and the 2025-era leg keeps its servers connected.
  const idleModern: McpServer[] = [];
  const takeModern = (): McpServer => {
    const server = idleModern.pop() ?? newServer(deps);
    // The SDK closes the server once its one exchange is answered (it wraps
    // this onclose with its own and calls it); only then is it free again.
    server.server.onclose = () => {
      if (idleModern.length < MAX_IDLE_SERVERS) idleModern.push(server);
    };
    return server;
  };
  const modern = withoutJsonModeWarning(() =>
    createMcpHandler(takeModern, {
      // 2025-era requests never reach this handler (see `answer`), and with
      // "reject" it builds no fallback of its own.
      legacy: "reject",
      // Plain JSON answers rather than a one-event SSE stream: every call has
      // exactly one response and Cairn sends no messages before it, so the
      // stream framing was pure cost on both ends. Clients accept either (spec).
      responseMode: "json",
      onerror: (error) => {
        // A rejected request (an unsupported revision, a header that contradicts
        // the body, a missing client capability) is the client's mistake and has
        // its answer; only the server's own failures are worth a log line.
        if (
          error instanceof ProtocolError ||
          /^(Rejected|Unsupported Media Type)/.test(error.message)
        ) {
          return;
        }
        logUnexpected("MCP handler error", error);
      },
    }),
  );

  // The SDK's own 2025-era fallback answers every call as a one-event SSE
  // stream (its transport takes no JSON option there), so that era is served
  // here, as the SDK documents for a hand-wired legacy leg: stateless, in JSON
  // mode, on pooled servers each connected once to a transport of its own that
  // serves one exchange at a time (lib/mcp/exchange-transport.ts).
  const idleLegacy: ExchangeTransport[] = [];
  const legacy = async (headers: HeaderReader, body: unknown, authInfo: AuthInfo) => {
    // The SDK's server keeps what an `initialize` declares (the client's
    // capabilities and identity, the revision, which picks the codec its
    // tools/call checks use) and nothing resets it: on a pooled server it
    // would meet the next caller's exchanges. So an `initialize` (once per
    // client session) gets a server of its own, which is then dropped.
    if (isInitialize(body)) return (await connectLegacy(deps)).exchange(headers, body, authInfo);
    const taken = idleLegacy.pop() ?? (await connectLegacy(deps));
    const response = await taken.exchange(headers, body, authInfo);
    if (idleLegacy.length < MAX_IDLE_SERVERS) idleLegacy.push(taken);
    return response;
  };

  const answer = async (
    request: DoorRequest,
    body: unknown,
    principal: McpPrincipal,
  ): Promise<McpAnswer> => {
    const authInfo: AuthInfo = {
      token: "",
      clientId: principal.credentialId,
      scopes: [],
      extra: { principal },
    };
    if (isLegacyEra(request, body)) return legacy(request.headers, body, authInfo);
    return modern.fetch(request.web(), { parsedBody: body, authInfo });
  };

  // Every request carries a key or token: none, a wrong one or a revoked one is a 401.
  return withFrontDoor(answer, (token, request) => deps.authenticate(token, request), frontDoor);
}

/**
 * The SDK's own era decision (the `_meta` envelope's claim, the
 * MCP-Protocol-Version header), as its `isLegacyRequest` makes it for a POST
 * whose body is already parsed (the front door refuses every other request),
 * read from the headers without a web `Request`.
 */
export function isLegacyEra(request: DoorRequest, body: unknown): boolean {
  const { headers } = request;
  return (
    classifyInboundRequest({
      httpMethod: request.method,
      protocolVersionHeader: headers.get("mcp-protocol-version") ?? undefined,
      mcpMethodHeader: headers.get("mcp-method") ?? undefined,
      mcpNameHeader: headers.get("mcp-name") ?? undefined,
      body,
    }).kind === "legacy"
  );
}

function isInitialize(body: unknown): boolean {
  return (
    typeof body === "object" && body !== null && "method" in body && body.method === "initialize"
  );
}

/** A new server for the 2025-era leg, connected for good (its transport holds it). */
async function connectLegacy(deps: CairnServerDeps): Promise<ExchangeTransport> {
  const transport = new ExchangeTransport();
  await newServer(deps).connect(transport);
  return transport;
}

/** A server with Cairn's handlers attached, as the route pools them. */
export function newServer(deps: CairnServerDeps): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: SERVER_CAPABILITIES,
    instructions: SERVER_INSTRUCTIONS,
    cacheHints: SERVER_CACHE_HINTS,
    // The review form's state comes back from the client: verified (signature,
    // expiry, credential) before any handler sees it.
    requestState: { verify: (state, ctx) => reviewFormState().verify(state, ctx) },
  });
  registerCairnServer(server, deps);
  return server;
}

/**
 * Builds the SDK's handler without its start-up warning that JSON answers drop
 * notifications sent before a call's result ("responseMode: 'json' drops
 * mid-call notifications…"): Cairn sends none (see `responseMode` above), so
 * the line told an operator nothing they could act on. Any other warning passes.
 */
function withoutJsonModeWarning<T>(build: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === "string" && args[0].startsWith("responseMode: 'json'")) return;
    warn(...args);
  };
  try {
    return build();
  } finally {
    console.warn = warn;
  }
}
