/**
 * The protocol work is @node-oauth/oauth2-server's (docs/oauth.md): it checks
 * the authorization request's client and redirect URI, issues the code, and at
 * the token endpoint checks the code (one use, expiry, PKCE verifier, redirect
 * URI, client), rotates refresh tokens and answers with standard errors. This
 * file is its storage model on Cairn's database (nothing in process memory, so
 * any app instance can finish a flow another one started) and the adapters
 * between Next's web Request/Response and the library's.
 *
 * What the library leaves open, Cairn checks around it: PKCE is required and
 * S256 only, and the `resource` (RFC 8707) must be Cairn's MCP resource.
 */
import { randomBytes } from "node:crypto";
import OAuth2Server from "@node-oauth/oauth2-server";
import { and, eq, gte, inArray, isNull, lt, notExists, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import {
  accountAuditLog,
  oauthAuthorizationCodes,
  oauthClients,
  oauthGrants,
  oauthTokens,
  users,
} from "../db/schema";
import { isAppError } from "../plan-engine/app-error";
import { revokeGrant } from "../services/accounts/connected-apps";
import { hashToken } from "../services/accounts/oauth-token-auth";
import type { OAuthClient } from "./clients";
import {
  ACCESS_TOKEN_LIFETIME_SECONDS,
  ACCESS_TOKEN_PREFIX,
  AUTHORIZATION_CODE_LIFETIME_SECONDS,
  MCP_SCOPE,
  REFRESH_TOKEN_LIFETIME_SECONDS,
  REFRESH_TOKEN_PREFIX,
} from "./config";

const GRANTS = ["authorization_code", "refresh_token"];

/** The library's user: who approved, in which tenant, for which resource (and, once tokens exist, the grant). */
type FlowUser = { id: string; tenantId: string; resource: string; grantId?: string };
type FlowClient = { id: string; rowId: string; grants: string[]; redirectUris: string[] };

function flowClient(client: Pick<OAuthClient, "id" | "clientId" | "redirectUris">): FlowClient {
  return {
    id: client.clientId,
    rowId: client.id,
    grants: GRANTS,
    redirectUris: client.redirectUris,
  };
}

function scopeList(scope: string): string[] {
  return scope.split(" ").filter(Boolean);
}

/**
 * How the library finds a client by its client_id: undefined for one unknown
 * or refused (the caller decides whether a metadata document may be fetched).
 */
export type ClientLookup = (clientId: string) => Promise<OAuthClient | undefined>;

/**
 * `resource` is the MCP resource of the origin the request came to: codes and
 * refresh tokens issued for another are not found, so they are refused before
 * anything is used up.
 */
function model(db: Database, resource: string, clients: ClientLookup) {
  return {
    async getClient(clientId: string) {
      const client = await clients(clientId);
      return client ? flowClient(client) : undefined;
    },

    generateAuthorizationCode: async () => randomBytes(32).toString("base64url"),
    generateAccessToken: async () =>
      `${ACCESS_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`,
    generateRefreshToken: async () =>
      `${REFRESH_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`,

    /** Cairn has one scope: whatever was asked, the grant is `mcp` (see checkAuthorizationRequest). */
    async validateScope() {
      return [MCP_SCOPE];
    },

    async saveAuthorizationCode(
      code: {
        authorizationCode: string;
        expiresAt: Date;
        redirectUri: string;
        scope?: string[];
        codeChallenge?: string;
        codeChallengeMethod?: string;
      },
      client: FlowClient,
      user: FlowUser,
    ) {
      if (!code.codeChallenge || code.codeChallengeMethod !== "S256") {
        // Checked before the library runs (checkAuthorizationRequest); kept as a guard.
        throw new Error("an authorization code without an S256 challenge");
      }
      // Codes are kept a day past their expiry (a late reuse still finds its
      // row), then dropped here rather than by a job: the index makes it cheap.
      await db
        .delete(oauthAuthorizationCodes)
        .where(lt(oauthAuthorizationCodes.expiresAt, new Date(Date.now() - 24 * 3600 * 1000)));
      await db.insert(oauthAuthorizationCodes).values({
        tenantId: user.tenantId,
        codeHash: hashToken(code.authorizationCode),
        clientId: client.rowId,
        userId: user.id,
        redirectUri: code.redirectUri,
        codeChallenge: code.codeChallenge,
        codeChallengeMethod: code.codeChallengeMethod,
        resource: user.resource,
        scope: (code.scope ?? [MCP_SCOPE]).join(" "),
        expiresAt: code.expiresAt,
      });
      return { ...code, client, user };
    },

    async getAuthorizationCode(authorizationCode: string) {
      const [row] = await db
        .select({
          code: oauthAuthorizationCodes,
          client: oauthClients,
        })
        .from(oauthAuthorizationCodes)
        .innerJoin(oauthClients, eq(oauthClients.id, oauthAuthorizationCodes.clientId))
        .innerJoin(users, eq(users.id, oauthAuthorizationCodes.userId))
        .where(
          and(
            eq(oauthAuthorizationCodes.codeHash, hashToken(authorizationCode)),
            eq(oauthAuthorizationCodes.resource, resource),
            isNull(users.disabledAt),
            notExists(credentialsEndedSince(db)),
          ),
        );
      if (!row) return undefined;
      if (row.code.usedAt) {
        // A code presented twice has leaked (OAuth 2.1 §4.1.3): the app it
        // connected (the user's one live grant for this client) is revoked.
        const [grant] = await db
          .select({ id: oauthGrants.id })
          .from(oauthGrants)
          .where(
            and(
              eq(oauthGrants.userId, row.code.userId),
              eq(oauthGrants.clientId, row.code.clientId),
              eq(oauthGrants.resource, row.code.resource),
              isNull(oauthGrants.revokedAt),
            ),
          );
        if (grant) await revokeQuietly(db, row.code.tenantId, grant.id);
        return undefined;
      }
      return {
        authorizationCode,
        expiresAt: row.code.expiresAt,
        redirectUri: row.code.redirectUri,
        scope: scopeList(row.code.scope),
        codeChallenge: row.code.codeChallenge,
        codeChallengeMethod: row.code.codeChallengeMethod,
        client: flowClient(row.client),
        user: {
          id: row.code.userId,
          tenantId: row.code.tenantId,
          resource: row.code.resource,
        } satisfies FlowUser,
      };
    },

    /** One use: the guarded update lets exactly one of two racing exchanges through. */
    async revokeAuthorizationCode(code: { authorizationCode: string }) {
      const used = await db
        .update(oauthAuthorizationCodes)
        .set({ usedAt: new Date() })
        .where(
          and(
            eq(oauthAuthorizationCodes.codeHash, hashToken(code.authorizationCode)),
            isNull(oauthAuthorizationCodes.usedAt),
          ),
        )
        .returning({ id: oauthAuthorizationCodes.id });
      return used.length === 1;
    },

    async saveToken(
      token: {
        accessToken: string;
        accessTokenExpiresAt?: Date;
        refreshToken?: string;
        refreshTokenExpiresAt?: Date;
        authorizationCode?: string;
        scope?: string[];
      },
      client: FlowClient,
      user: FlowUser,
    ) {
      const scope = (token.scope ?? [MCP_SCOPE]).join(" ");
      const grantId = user.grantId ?? (await connectedApp(db, user, client, scope));
      const now = Date.now();
      const accessTokenExpiresAt =
        token.accessTokenExpiresAt ?? new Date(now + ACCESS_TOKEN_LIFETIME_SECONDS * 1000);
      const refreshTokenExpiresAt =
        token.refreshTokenExpiresAt ?? new Date(now + REFRESH_TOKEN_LIFETIME_SECONDS * 1000);
      const rows: (typeof oauthTokens.$inferInsert)[] = [
        {
          grantId,
          kind: "access",
          tokenHash: hashToken(token.accessToken),
          expiresAt: accessTokenExpiresAt,
        },
      ];
      if (token.refreshToken) {
        rows.push({
          grantId,
          kind: "refresh",
          tokenHash: hashToken(token.refreshToken),
          expiresAt: refreshTokenExpiresAt,
        });
      }
      // The grant's expired tokens go as new ones come. Rotated refresh tokens stay
      // until they expire, so a replay of one is recognised (getRefreshToken).
      await db
        .delete(oauthTokens)
        .where(and(eq(oauthTokens.grantId, grantId), lt(oauthTokens.expiresAt, new Date(now))));
      await db.insert(oauthTokens).values(rows);
      return {
        accessToken: token.accessToken,
        accessTokenExpiresAt,
        ...(token.refreshToken ? { refreshToken: token.refreshToken, refreshTokenExpiresAt } : {}),
        scope: token.scope ?? [MCP_SCOPE],
        client,
        user: { ...user, grantId },
      };
    },

    async getRefreshToken(refreshToken: string) {
      const [row] = await db
        .select({
          token: oauthTokens,
          grant: oauthGrants,
          client: oauthClients,
          userDisabledAt: users.disabledAt,
        })
        .from(oauthTokens)
        .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
        .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
        .innerJoin(users, eq(users.id, oauthGrants.userId))
        .where(
          and(
            eq(oauthTokens.tokenHash, hashToken(refreshToken)),
            eq(oauthTokens.kind, "refresh"),
            eq(oauthGrants.resource, resource),
          ),
        );
      if (!row) return undefined;
      if (row.token.revokedAt && !row.grant.revokedAt) {
        // A refresh token used again after it was rotated: two parties hold it,
        // one of them not the client (OAuth 2.1 §4.3.1). The whole connected app
        // is revoked, the holder of the newer tokens included.
        await revokeQuietly(db, row.grant.tenantId, row.grant.id);
      }
      if (row.token.revokedAt || row.grant.revokedAt || row.userDisabledAt) return undefined;
      return {
        refreshToken,
        refreshTokenExpiresAt: row.token.expiresAt,
        scope: scopeList(row.grant.scope),
        client: flowClient(row.client),
        user: {
          id: row.grant.userId,
          tenantId: row.grant.tenantId,
          resource: row.grant.resource,
          grantId: row.grant.id,
        } satisfies FlowUser,
      };
    },

    /** Rotation: the used refresh token dies; of two racing refreshes only one gets new tokens. */
    async revokeToken(token: { refreshToken?: string }) {
      if (!token.refreshToken) return false;
      const revoked = await db
        .update(oauthTokens)
        .set({ revokedAt: new Date() })
        .where(
          and(
            eq(oauthTokens.tokenHash, hashToken(token.refreshToken)),
            eq(oauthTokens.kind, "refresh"),
            isNull(oauthTokens.revokedAt),
          ),
        )
        .returning({ id: oauthTokens.id });
      return revoked.length === 1;
    },

    // Required by the library's type; Cairn checks access tokens itself on the
    // MCP route (lib/services/accounts/oauth-token-auth.ts), joined to grant and user.
    async getAccessToken() {
      return undefined;
    },
  };
}

/**
 * What ended the code's way in after it was issued: a password change or the
 * user's disabling (the account trail's rows; every session ended then, the
 * one that approved the code included), or a revocation of the connected app
 * it was for. Those delete unused codes as they happen; this check at the
 * exchange also holds for a code stored while they ran.
 */
function credentialsEndedSince(db: Database) {
  const code = oauthAuthorizationCodes;
  return db
    .select({ one: sql`1` })
    .from(accountAuditLog)
    .where(
      and(
        eq(accountAuditLog.tenantId, code.tenantId),
        eq(accountAuditLog.userId, code.userId),
        inArray(accountAuditLog.eventType, ["password_changed", "user_disabled"]),
        gte(accountAuditLog.createdAt, code.createdAt),
      ),
    )
    .unionAll(
      db
        .select({ one: sql`1` })
        .from(oauthGrants)
        .where(
          and(
            eq(oauthGrants.userId, code.userId),
            eq(oauthGrants.clientId, code.clientId),
            eq(oauthGrants.resource, code.resource),
            gte(oauthGrants.revokedAt, code.createdAt),
          ),
        ),
    );
}

/** Revokes a connected app; one revoked meanwhile (NOT_FOUND) is no error here. */
async function revokeQuietly(db: Database, tenantId: string, grantId: string) {
  await revokeGrant(db, tenantId, grantId).catch((error: unknown) => {
    if (!isAppError(error)) throw error;
  });
}

/**
 * The user's connected app for this client: the live grant when they approved
 * it before, else a new one. One grant per user, client and resource keeps the
 * Users & keys list to one line per app, and revoking it stops every token.
 */
async function connectedApp(
  db: Database,
  user: FlowUser,
  client: FlowClient,
  scope: string,
): Promise<string> {
  const [existing] = await db
    .select({ id: oauthGrants.id })
    .from(oauthGrants)
    .where(
      and(
        eq(oauthGrants.userId, user.id),
        eq(oauthGrants.clientId, client.rowId),
        eq(oauthGrants.resource, user.resource),
        isNull(oauthGrants.revokedAt),
      ),
    );
  if (existing) return existing.id;
  const [created] = await db
    .insert(oauthGrants)
    .values({
      tenantId: user.tenantId,
      userId: user.id,
      clientId: client.rowId,
      resource: user.resource,
      scope,
    })
    .returning({ id: oauthGrants.id });
  if (!created) throw new Error("the connected app was not stored");
  return created.id;
}

export function oauthServer(db: Database, resource: string, clients: ClientLookup): OAuth2Server {
  return new OAuth2Server({
    model: model(db, resource, clients) as unknown as OAuth2Server.AuthorizationCodeModel &
      OAuth2Server.RefreshTokenModel,
    authorizationCodeLifetime: AUTHORIZATION_CODE_LIFETIME_SECONDS,
    accessTokenLifetime: ACCESS_TOKEN_LIFETIME_SECONDS,
    refreshTokenLifetime: REFRESH_TOKEN_LIFETIME_SECONDS,
    allowEmptyState: true,
    alwaysIssueNewRefreshToken: true,
    // Public clients: PKCE (authorization_code) or the refresh token itself, no secret.
    requireClientAuthentication: { authorization_code: false, refresh_token: false },
  });
}
