/** Revokes a key of the tenant; the MCP route looks keys up on every request, so it stops at once. */
import "server-only";
import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import { sameTenant } from "../../db/same-tenant";
import { apiKeys } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import type { ServiceContext } from "../shared/context";
import { recordIdField } from "../shared/fields";
import { parseInput } from "../shared/validation";

export const revokeApiKeyInput = z.object({ apiKeyId: recordIdField("an API key") });

export async function revokeApiKey(
  ctx: ServiceContext,
  raw: z.input<typeof revokeApiKeyInput>,
): Promise<void> {
  const input = parseInput(revokeApiKeyInput, raw);
  const [row] = await ctx.db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(apiKeys.id, input.apiKeyId),
        sameTenant(apiKeys.tenantId, ctx.tenantId),
        isNull(apiKeys.revokedAt),
      ),
    )
    .returning({ id: apiKeys.id });
  if (!row) {
    throw new AppError("NOT_FOUND", "No active key with that id exists in this account.");
  }
}
