import { createMcpHandler, withMcpAuth } from "@vercel/mcp-adapter";
import { getDb } from "@/lib/db/client";
import { env } from "@/lib/env";
import { withFrontDoor } from "@/lib/mcp/front-door";
import {
  registerCairnServer,
  SERVER_CAPABILITIES,
  SERVER_INFO,
  SERVER_INSTRUCTIONS,
} from "@/lib/mcp/server";
import { authenticateApiKey } from "@/lib/services/api-key-auth";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const config = env();

const mcpHandler = createMcpHandler(
  (server) =>
    registerCairnServer(server, {
      getDb,
      stallThresholdSeconds: config.CAIRN_STALL_THRESHOLD_SECONDS,
      llm: {
        baseUrl: config.CAIRN_LLM_BASE_URL,
        apiKey: config.CAIRN_LLM_API_KEY,
        model: config.CAIRN_LLM_MODEL,
      },
    }),
  { serverInfo: SERVER_INFO, capabilities: SERVER_CAPABILITIES, instructions: SERVER_INSTRUCTIONS },
  // basePath is the folder above `mcp`: this route is /api/mcp. SSE is a legacy transport.
  { basePath: "/api", disableSse: true, maxDuration: 60 },
);

const authenticated = withMcpAuth(
  mcpHandler,
  async (_request, bearerToken) => {
    const principal = await authenticateApiKey(await getDb(), bearerToken);
    if (!principal) return undefined;
    return {
      token: "",
      clientId: principal.apiKeyId,
      scopes: [],
      extra: { principal },
    };
  },
  { required: true },
);

const handler = withFrontDoor(authenticated, {
  maxBodyBytes: config.CAIRN_MAX_BODY_BYTES,
  allowedOrigins: (config.CAIRN_ALLOWED_ORIGINS ?? "")
    .split(",")
    .map((origin) => origin.trim())
    .filter(Boolean),
});

export { handler as DELETE, handler as GET, handler as POST };
