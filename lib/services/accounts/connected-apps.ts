/**
 * Connected apps: the OAuth grants people approved on the consent page, listed
 * next to API keys and revoked from the web UI. Revoking one marks the grant
 * and its tokens, and the MCP route reads the grant on every request, so the
 * app stops at once.
 */
import { and, desc, eq, isNull, min } from "drizzle-orm";
import type { Database } from "../../db/client";
import {
  mcpToolCallLog,
  oauthClients,
  oauthGrants,
  oauthTokens,
  tenants,
  users,
} from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";

export type ConnectedApp = {
  grantId: string;
  /** Unverified: the name the client gave itself. */
  clientName: string | null;
  clientId: string;
  email: string;
  userDisabledAt: Date | null;
  createdAt: Date;
  firstUsedAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};

/** The tenant's connected apps, newest first; only one user's with `userId`. */
export async function listConnectedApps(
  db: Database,
  tenantId: string,
  userId?: string,
): Promise<ConnectedApp[]> {
  const firstUse = db
    .select({ grantId: mcpToolCallLog.oauthGrantId, at: min(mcpToolCallLog.createdAt).as("at") })
    .from(mcpToolCallLog)
    .where(eq(mcpToolCallLog.tenantId, tenantId))
    .groupBy(mcpToolCallLog.oauthGrantId)
    .as("first_use");
  return db
    .select({
      grantId: oauthGrants.id,
      clientName: oauthClients.clientName,
      clientId: oauthClients.clientId,
      email: users.email,
      userDisabledAt: users.disabledAt,
      createdAt: oauthGrants.createdAt,
      firstUsedAt: firstUse.at,
      lastUsedAt: oauthGrants.lastUsedAt,
      revokedAt: oauthGrants.revokedAt,
    })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .innerJoin(users, eq(users.id, oauthGrants.userId))
    .leftJoin(firstUse, eq(firstUse.grantId, oauthGrants.id))
    .where(
      and(
        eq(oauthGrants.tenantId, tenantId),
        userId === undefined ? undefined : eq(oauthGrants.userId, userId),
      ),
    )
    .orderBy(desc(oauthGrants.createdAt));
}

/**
 * Revokes a connected app of the tenant (of one user with `userId`): the grant
 * and every token of it. NOT_FOUND for another tenant's, or an already revoked one.
 */
export async function revokeConnectedApp(
  db: Database,
  tenantId: string,
  grantId: string,
  userId?: string,
): Promise<void> {
  if (!/^[0-9a-f-]{36}$/i.test(grantId)) {
    throw new AppError("NOT_FOUND", "No connected app with that id exists in this account.");
  }
  const now = new Date();
  const revoked = await db.transaction(async (tx) => {
    const [row] = await tx
      .update(oauthGrants)
      .set({ revokedAt: now })
      .where(
        and(
          eq(oauthGrants.id, grantId),
          eq(oauthGrants.tenantId, tenantId),
          userId === undefined ? undefined : eq(oauthGrants.userId, userId),
          isNull(oauthGrants.revokedAt),
        ),
      )
      .returning({ id: oauthGrants.id });
    if (!row) return false;
    await tx
      .update(oauthTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthTokens.grantId, grantId), isNull(oauthTokens.revokedAt)));
    return true;
  });
  if (!revoked) {
    throw new AppError("NOT_FOUND", "No connected app with that id exists in this account.");
  }
}

export async function tenantName(db: Database, tenantId: string): Promise<string> {
  const [row] = await db
    .select({ name: tenants.name })
    .from(tenants)
    .where(eq(tenants.id, tenantId));
  return row?.name ?? "";
}
