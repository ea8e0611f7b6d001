/**
 * /api/mcp: the front door, then the API key (`withMcpAuth` of
 * @vercel/mcp-adapter, `required: true`), then the SDK's web-standard Streamable
 * HTTP transport in stateless mode.
 *
 * Why not the adapter's `createMcpHandler` too: it built a new McpServer for
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
import { withMcpAuth } from "@vercel/mcp-adapter";
import type { ApiKeyPrincipal } from "../services/api-key-auth";
import { type FrontDoorOptions, withFrontDoor } from "./front-door";
import {
  type CairnServerDeps,
  registerCairnServer,
  SERVER_CAPABILITIES,
  SERVER_INFO,
  SERVER_INSTRUCTIONS,
} from "./server";

export type McpRouteDeps = CairnServerDeps & {
  authenticate(bearerToken: string | undefined): Promise<ApiKeyPrincipal | undefined>;
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

  // The front door's parsed body travels with its Request through withMcpAuth,
  // which hands the same Request object on.
  const parsedBodies = new WeakMap<Request, unknown>();

  const answer = async (request: Request): Promise<Response> => {
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
      return await transport.handleRequest(request, {
        parsedBody: parsedBodies.get(request),
        authInfo: request.auth,
      });
    } finally {
      await server.close();
      if (idle.length < MAX_IDLE_SERVERS) idle.push(server);
    }
  };

  const authenticated = withMcpAuth(
    answer,
    async (_request, bearerToken): Promise<AuthInfo | undefined> => {
      const principal = await deps.authenticate(bearerToken);
      if (!principal) return undefined;
      return { token: "", clientId: principal.apiKeyId, scopes: [], extra: { principal } };
    },
    // Every request carries a key: none, a wrong one or a revoked one is a 401.
    { required: true },
  );

  return withFrontDoor((request, body) => {
    parsedBodies.set(request, body);
    return authenticated(request);
  }, frontDoor);
}
