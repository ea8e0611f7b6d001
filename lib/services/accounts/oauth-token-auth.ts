/**
 * Who an OAuth access token acts for (docs/oauth.md). Like an API key: one
 * indexed read by hash, joined to its grant (the connected app), its client and
 * its user, so a revoked app, a disabled or deleted user, or an expired token
 * stops at once. The token must have been issued for this server's MCP
 * resource (RFC 8707): a token for another audience is refused.
 */
import "server-only";
import { createHash } from "node:crypto";
import { and, eq, gt, isNull, lt, or } from "drizzle-orm";
import type { Database } from "../../db/client";
import { oauthClients, oauthGrants, oauthTokens, users } from "../../db/schema";
import { logUnexpected } from "../../log";

export type OAuthPrincipal = {
  grantId: string;
  /** The client's `client_id` (a team may trust only some clients' in-client answers). */
  clientId: string;
  tenantId: string;
  userId: string;
  label: string;
  /** When the token expires: a door that remembers it must not past then. */
  expiresAt: Date;
};

const LAST_USED_RESOLUTION_MS = 60_000;

/** How OAuth tokens and codes are stored: their SHA-256 (256 random bits need no slow hash). */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export async function authenticateOAuthToken(
  db: Database,
  token: string,
  resource: string,
): Promise<OAuthPrincipal | undefined> {
  if (token.length > 200) return undefined;
  const now = new Date();
  const [row] = await db
    .select({
      grantId: oauthGrants.id,
      tenantId: oauthGrants.tenantId,
      userId: oauthGrants.userId,
      lastUsedAt: oauthGrants.lastUsedAt,
      expiresAt: oauthTokens.expiresAt,
      clientName: oauthClients.clientName,
      clientId: oauthClients.clientId,
      email: users.email,
    })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .innerJoin(users, eq(users.id, oauthGrants.userId))
    .where(
      and(
        eq(oauthTokens.tokenHash, hashToken(token)),
        eq(oauthTokens.kind, "access"),
        isNull(oauthTokens.revokedAt),
        gt(oauthTokens.expiresAt, now),
        isNull(oauthGrants.revokedAt),
        eq(oauthGrants.resource, resource),
        isNull(users.disabledAt),
      ),
    );
  if (!row) return undefined;

  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    const cutoff = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
    void db
      .update(oauthGrants)
      .set({ lastUsedAt: now })
      .where(
        and(
          eq(oauthGrants.id, row.grantId),
          or(isNull(oauthGrants.lastUsedAt), lt(oauthGrants.lastUsedAt, cutoff)),
        ),
      )
      .catch((error: unknown) => logUnexpected("Could not record an app's last use", error));
  }
  // The client's name is its own claim: quoted, and cut short, in the audit label.
  const name = (row.clientName ?? row.clientId).slice(0, 80);
  return {
    grantId: row.grantId,
    clientId: row.clientId,
    tenantId: row.tenantId,
    userId: row.userId,
    label: `app ${JSON.stringify(name)} of ${row.email}`,
    expiresAt: row.expiresAt,
  };
}
