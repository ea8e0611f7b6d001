import { getDb } from "@/lib/db/client";
import { env } from "@/lib/env";
import { allowedOrigins } from "@/lib/http/allowed-host";
import { createMcpRoute } from "@/lib/mcp/http-handler";
import { ACCESS_TOKEN_PREFIX, oauthUrls, publicOrigin } from "@/lib/oauth/config";
import { authenticateApiKey } from "@/lib/services/accounts/api-key-auth";
import { authenticateOAuthToken } from "@/lib/services/accounts/oauth-token-auth";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const config = env();

/**
 * Both credentials work here: API keys (scripts, CLIs) and OAuth access tokens
 * (AI platforms that connected through the consent page). Their prefixes say
 * which table to look in, so each request costs one lookup.
 */
async function authenticate(token: string, request: Request) {
  const db = await getDb();
  if (token.startsWith(ACCESS_TOKEN_PREFIX)) {
    const origin = publicOrigin(request.headers);
    if (!origin) return undefined;
    const app = await authenticateOAuthToken(db, token, oauthUrls(origin).resource);
    return app && { kind: "oauth_app" as const, credentialId: app.grantId, ...app };
  }
  const key = await authenticateApiKey(db, token);
  return key && { kind: "api_key" as const, credentialId: key.apiKeyId, ...key };
}

const handler = createMcpRoute(
  {
    getDb,
    stallThresholdSeconds: config.CAIRN_STALL_THRESHOLD_SECONDS,
    stepLeaseSeconds: config.CAIRN_STEP_LEASE_SECONDS,
    llm: {
      baseUrl: config.CAIRN_LLM_BASE_URL,
      apiKey: config.CAIRN_LLM_API_KEY,
      model: config.CAIRN_LLM_MODEL,
    },
    authenticate,
  },
  {
    maxBodyBytes: config.CAIRN_MAX_BODY_BYTES,
    allowedOrigins: allowedOrigins(),
    corsOrigins: config.CAIRN_MCP_CORS_ORIGINS,
    resourceMetadataUrl: (request) => {
      const origin = publicOrigin(request.headers);
      return origin && oauthUrls(origin).resourceMetadata;
    },
  },
);

// OPTIONS: a listed browser host's CORS preflight (lib/mcp/front-door.ts).
export { handler as DELETE, handler as GET, handler as OPTIONS, handler as POST };
