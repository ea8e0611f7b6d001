/**
 * Connected apps: the OAuth grants people approved on the consent page, listed
 * next to API keys and revoked from the web UI. Revoking one marks the grant
 * and its tokens and deletes the app's unused authorization codes, and the MCP
 * route reads the grant on every request, so the app stops at once.
 */
import "server-only";
import { and, desc, eq, isNull, min } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { sameTenant } from "../../db/same-tenant";
import {
  mcpToolCallLog,
  oauthAuthorizationCodes,
  oauthClients,
  oauthGrants,
  oauthTokens,
  tenants,
  users,
} from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { actingUserId, type ServiceContext } from "../shared/context";
import { recordIdField } from "../shared/fields";
import { parseInput } from "../shared/validation";

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

/** The tenant's connected apps, newest first; with `own`, only the acting user's (the account page). */
export async function listConnectedApps(
  ctx: ServiceContext,
  input: { own?: boolean } = {},
): Promise<ConnectedApp[]> {
  const { db, tenantId } = ctx;
  const userId = input.own ? actingUserId(ctx) : undefined;
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

export const revokeConnectedAppInput = z.object({ grantId: recordIdField("a connected app") });

/**
 * Revokes a connected app of the tenant (with `own`, only one of the acting
 * user's: the account page): the grant and every token of it. NOT_FOUND for
 * another tenant's, or an already revoked one. `own` is the door's choice,
 * not the caller's input, so it is not among the input's fields.
 */
export async function revokeConnectedApp(
  ctx: ServiceContext,
  raw: z.input<typeof revokeConnectedAppInput>,
  scope: { own?: boolean } = {},
): Promise<void> {
  const { grantId } = parseInput(revokeConnectedAppInput, raw);
  await revokeGrant(ctx.db, ctx.tenantId, grantId, scope.own ? actingUserId(ctx) : undefined);
}

/**
 * The OAuth door's revocation (RFC 7009, and a reused refresh token): the token
 * itself names the grant and its tenant, and no person acts, so it takes the
 * database and the grant's tenant rather than a ServiceContext.
 */
export async function revokeGrant(
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
          sameTenant(oauthGrants.tenantId, tenantId),
          userId === undefined ? undefined : eq(oauthGrants.userId, userId),
          isNull(oauthGrants.revokedAt),
        ),
      )
      .returning({
        userId: oauthGrants.userId,
        clientId: oauthGrants.clientId,
        resource: oauthGrants.resource,
      });
    if (!row) return false;
    await tx
      .update(oauthTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthTokens.grantId, grantId), isNull(oauthTokens.revokedAt)));
    // A code the person approved for this app and not yet exchanged would make
    // a new grant: it goes too (the token endpoint also refuses a code issued
    // before a revocation of its app, docs/oauth.md).
    await tx
      .delete(oauthAuthorizationCodes)
      .where(
        and(
          eq(oauthAuthorizationCodes.userId, row.userId),
          eq(oauthAuthorizationCodes.clientId, row.clientId),
          eq(oauthAuthorizationCodes.resource, row.resource),
          isNull(oauthAuthorizationCodes.usedAt),
        ),
      );
    return true;
  });
  if (!revoked) {
    throw new AppError("NOT_FOUND", "No connected app with that id exists in this account.");
  }
}

/** The team's name, as the consent page shows it to the person approving an app. */
export async function tenantName(ctx: ServiceContext): Promise<string> {
  const [row] = await ctx.db
    .select({ name: tenants.name })
    .from(tenants)
    .where(eq(tenants.id, ctx.tenantId));
  return row?.name ?? "";
}
