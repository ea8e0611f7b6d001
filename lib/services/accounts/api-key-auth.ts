/**
 * Who an API key belongs to. Looked up on every MCP request (one indexed read by
 * hash, joined to its user), so a revoked key, or any key of a disabled or
 * deleted user, stops working at once. `last_used_at` is refreshed at
 * most once a minute, off the request's path.
 */
import "server-only";
import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { Database } from "../../db/client";
import { apiKeys, users } from "../../db/schema";
import { logUnexpected } from "../../log";
import { hashApiKey } from "./api-key";

export type ApiKeyPrincipal = {
  apiKeyId: string;
  tenantId: string;
  userId: string;
  /** How the audit trail names this caller. */
  label: string;
};

const LAST_USED_RESOLUTION_MS = 60_000;

export async function authenticateApiKey(
  db: Database,
  key: string | undefined,
): Promise<ApiKeyPrincipal | undefined> {
  if (!key || key.length > 200) return undefined;
  const [row] = await db
    .select({
      id: apiKeys.id,
      tenantId: apiKeys.tenantId,
      userId: apiKeys.userId,
      name: apiKeys.name,
      lastUsedAt: apiKeys.lastUsedAt,
      email: users.email,
    })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(
      and(
        eq(apiKeys.keyHash, hashApiKey(key)),
        isNull(apiKeys.revokedAt),
        isNull(users.disabledAt),
      ),
    );
  if (!row) return undefined;

  const now = Date.now();
  if (!row.lastUsedAt || now - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    const cutoff = new Date(now - LAST_USED_RESOLUTION_MS);
    void db
      .update(apiKeys)
      .set({ lastUsedAt: new Date(now) })
      .where(
        and(eq(apiKeys.id, row.id), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, cutoff))),
      )
      .catch((error: unknown) => logUnexpected("Could not record an API key's last use", error));
  }
  return {
    apiKeyId: row.id,
    tenantId: row.tenantId,
    userId: row.userId,
    label: `key "${row.name}" of ${row.email}`,
  };
}
