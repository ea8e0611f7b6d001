/**
 * /api/mcp behind the front door: the API key, then the SDK's web-standard
 * Streamable HTTP transport in stateless mode. The transport answers the
 * Request with a Response directly, so no Node request/response adapter, no
 * second body parse and no re-serialisation sit in between (what mcp-handler
 * did on every call). The SDK allows a stateless transport to serve one
 * request, so a transport is made per request; a server holds one transport at
 * a time, so servers with Cairn's handlers attached are kept in a pool and
 * reused once their request is answered, instead of being built per request.
 * The tool list and its JSON Schemas are built once (lib/mcp/server.ts).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { ApiKeyPrincipal } from "../services/api-key-auth";
import {
  type CairnServerDeps,
  registerCairnTools,
  SERVER_CAPABILITIES,
  SERVER_INFO,
  SERVER_INSTRUCTIONS,
} from "./server";

export type McpHttpDeps = CairnServerDeps & {
  authenticate(bearerToken: string | undefined): Promise<ApiKeyPrincipal | undefined>;
};

function bearerToken(request: Request): string | undefined {
  const [type, token] = request.headers.get("authorization")?.split(" ") ?? [];
  return type?.toLowerCase() === "bearer" ? token : undefined;
}

/** Where a client would look for the protected-resource metadata (RFC 9728), behind a proxy too. */
function publicOrigin(request: Request): string {
  const forwardedHost = request.headers.get("x-forwarded-host")?.split(",")[0]?.trim();
  if (forwardedHost) {
    const proto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || "https";
    return `${proto}://${forwardedHost}`;
  }
  return new URL(request.url).origin;
}

function unauthorized(request: Request, description: string): Response {
  const metadata = `${publicOrigin(request)}/.well-known/oauth-protected-resource`;
  return new Response(JSON.stringify({ error: "invalid_token", error_description: description }), {
    status: 401,
    headers: {
      "Content-Type": "application/json",
      "WWW-Authenticate": `Bearer error="invalid_token", error_description="${description}", resource_metadata="${metadata}"`,
    },
  });
}

/** Idle servers kept for reuse: about the requests served at once, no more. */
const MAX_IDLE_SERVERS = 64;

/** Answers one JSON-RPC POST whose body the front door has read and parsed. */
export function createMcpHttpHandler(deps: McpHttpDeps) {
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
    registerCairnTools(server, deps);
    return server;
  };

  return async (request: Request, body: unknown): Promise<Response> => {
    let principal: ApiKeyPrincipal | undefined;
    try {
      principal = await deps.authenticate(bearerToken(request));
    } catch (error) {
      console.error("Unexpected error authenticating an API key:", error);
      return unauthorized(request, "Invalid token");
    }
    if (!principal) return unauthorized(request, "No authorization provided");

    const server = takeServer();
    // Plain JSON answers rather than a one-event SSE stream: every tool call has
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
        parsedBody: body,
        authInfo: { token: "", clientId: principal.apiKeyId, scopes: [], extra: { principal } },
      });
    } finally {
      await server.close();
      if (idle.length < MAX_IDLE_SERVERS) idle.push(server);
    }
  };
}
