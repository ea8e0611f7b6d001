import { getDb } from "@/lib/db/client";
import { env } from "@/lib/env";
import { createMcpRoute } from "@/lib/mcp/http-handler";
import { authenticateApiKey } from "@/lib/services/api-key-auth";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const config = env();

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
    authenticate: async (token) => authenticateApiKey(await getDb(), token),
  },
  {
    maxBodyBytes: config.CAIRN_MAX_BODY_BYTES,
    allowedOrigins: (config.CAIRN_ALLOWED_ORIGINS ?? "")
      .split(",")
      .map((origin) => origin.trim())
      .filter(Boolean),
  },
);

export { handler as DELETE, handler as GET, handler as POST };
