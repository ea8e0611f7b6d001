import { after } from "next/server";
import { getDatabaseHandle, getDb } from "@/lib/db/client";
import { env } from "@/lib/env";
import { allowedOrigins } from "@/lib/http/allowed-host";
import { type Checked, CREDENTIALS_CHANGED, CredentialCache } from "@/lib/mcp/credential-cache";
import { asResponse, type DoorRequest, doorRequest } from "@/lib/mcp/front-door";
import { createMcpRoute } from "@/lib/mcp/http-handler";
import { publishMcpDoor } from "@/lib/mcp/node-door";
import type { McpPrincipal } from "@/lib/mcp/request-context";
import { ACCESS_TOKEN_PREFIX, oauthUrls, publicOrigin } from "@/lib/oauth/config";
import { authenticateApiKey } from "@/lib/services/accounts/api-key-auth";
import { authenticateOAuthToken } from "@/lib/services/accounts/oauth-token-auth";
import { toolCallLogWritten } from "@/lib/services/shared/tool-call-log";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const config = env();

/**
 * Both credentials work here: API keys (scripts, CLIs) and OAuth access tokens
 * (AI platforms that connected through the consent page). Their prefixes say
 * which table to look in, so a lookup is one read, and a credential checked a
 * moment ago is not looked up again until anything it stands for changes
 * (lib/mcp/credential-cache.ts).
 */
const credentials = new CredentialCache<McpPrincipal>();
/** Started at the first call, not at import: `next build` loads this module too. */
let listening = false;
function listenForChanges() {
  if (listening) return;
  listening = true;
  getDatabaseHandle().then(
    (handle) => handle.listen(CREDENTIALS_CHANGED, credentials.onEvent),
    // No database now: every call looks its credential up; the next one tries again.
    () => {
      listening = false;
    },
  );
}

async function lookUp(
  token: string,
  request: DoorRequest,
): Promise<Checked<McpPrincipal> | undefined> {
  const db = await getDb();
  if (token.startsWith(ACCESS_TOKEN_PREFIX)) {
    const origin = publicOrigin(request.headers);
    if (!origin) return undefined;
    const app = await authenticateOAuthToken(db, token, oauthUrls(origin).resource);
    if (!app) return undefined;
    const { expiresAt, grantId, ...who } = app;
    return { principal: { kind: "oauth_app", credentialId: grantId, ...who }, expiresAt };
  }
  const key = await authenticateApiKey(db, token);
  if (!key) return undefined;
  const { apiKeyId, ...who } = key;
  return { principal: { kind: "api_key", credentialId: apiKeyId, ...who } };
}

function authenticate(token: string, request: DoorRequest) {
  listenForChanges();
  // An OAuth token is valid for one resource, which the request's origin names.
  const origin = token.startsWith(ACCESS_TOKEN_PREFIX) ? publicOrigin(request.headers) : "";
  return credentials.check(`${origin}\n${token}`, () => lookUp(token, request));
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

/**
 * The production server (server.ts) answers /api/mcp with this same handler
 * from Node's request and response, in front of Next, once this module has
 * loaded (lib/mcp/node-door.ts); it waits for the tool-call log at shutdown
 * itself. This route serves `next dev`, and the first request before that.
 */
publishMcpDoor({ handle: handler, written: toolCallLogWritten });

/**
 * The tool-call log is written in batches after the answers; a server that is
 * shutting down waits for what was handed to `after()`, so no row gathered
 * before it stopped is lost (lib/services/shared/tool-call-log.ts).
 */
async function answer(request: Request): Promise<Response> {
  const response = asResponse(await handler(doorRequest(request), request.body));
  after(toolCallLogWritten());
  return response;
}

// OPTIONS: a listed browser host's CORS preflight (lib/mcp/front-door.ts).
export { answer as DELETE, answer as GET, answer as OPTIONS, answer as POST };
