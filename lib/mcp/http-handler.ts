/**
 * /api/mcp: the front door (which also checks the API key, before reading the
 * body), then the SDK's web-standard Streamable HTTP transport in stateless mode.
 *
 * Why the key is not checked by `withMcpAuth` of @vercel/mcp-adapter: wrapped
 * round the handler the front door hands a parsed body to, it ran only after
 * the body had been read; it called a wrong key "No authorization provided"; and
 * every 401 pointed clients at OAuth metadata that Cairn does not serve.
 *
 * Why not the adapter's `createMcpHandler` either: it built a new McpServer for
 * every request, parsed every body twice and re-serialised it through a Node
 * request/response shim; the benchmark (bench/) measured the transport as the
 * loop's bottleneck. Here the body is parsed once by the front door and handed
 * over; the transport answers the Request with a Response directly; and, since a
 * stateless transport serves one request and a server holds one transport at a
 * time, servers with Cairn's handlers attached are pooled and reused once their
 * request is answered. The tool list and its JSON Schemas are built once
 * (lib/mcp/server.ts).
 */
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { type FrontDoorOptions, withFrontDoor } from "./front-door";
import type { McpPrincipal } from "./request-context";
import {
  type CairnServerDeps,
  registerCairnServer,
  SERVER_CAPABILITIES,
  SERVER_INFO,
  SERVER_INSTRUCTIONS,
} from "./server";

export type McpRouteDeps = CairnServerDeps & {
  /** The API key's or OAuth token's principal; undefined for a wrong, revoked or expired one. */
  authenticate(bearerToken: string, request: Request): Promise<McpPrincipal | undefined>;
};

/** Idle servers kept for reuse: about the requests served at once, no more. */
const MAX_IDLE_SERVERS = 64;

export function createMcpRoute(
  deps: McpRouteDeps,
  frontDoor: FrontDoorOptions,
): (request: Request) => Promise<Response> {
  // A pooled server carries nothing from one request to the next that Cairn
  // reads: the handlers take the caller from each request's auth info, and
  // Cairn sends no server-initiated messages.
  const idle: McpServer[] = [];
  const takeServer = () => {
    const pooled = idle.pop();
    if (pooled) return pooled;
    const server = new McpServer(SERVER_INFO, {
      capabilities: SERVER_CAPABILITIES,
      instructions: SERVER_INSTRUCTIONS,
    });
    registerCairnServer(server, deps);
    return server;
  };

  const answer = async (
    request: Request,
    body: unknown,
    principal: McpPrincipal,
  ): Promise<Response> => {
    const server = takeServer();
    // Plain JSON answers rather than a one-event SSE stream: every call has
    // exactly one response and Cairn sends no server-initiated messages, so the
    // stream framing was pure cost on both ends. Clients accept either (spec).
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      // In JSON mode the answer is complete when it is returned, so the server
      // can let go of the transport and serve the next request.
      const authInfo: AuthInfo = {
        token: "",
        clientId: principal.credentialId,
        scopes: [],
        extra: { principal },
      };
      return await transport.handleRequest(request, { parsedBody: body, authInfo });
    } finally {
      await server.close();
      if (idle.length < MAX_IDLE_SERVERS) idle.push(server);
    }
  };

  // Every request carries a key or token: none, a wrong one or a revoked one is a 401.
  return withFrontDoor(answer, (token, request) => deps.authenticate(token, request), frontDoor);
}
