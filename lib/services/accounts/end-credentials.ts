/**
 * Internal to the use cases that end a person's access (change-own-password,
 * set-user-disabled): deletes their unused authorization codes, revokes their
 * connected apps (grants and every token of them) and, when asked, their API
 * keys, and writes the account trail's row saying what ended, all in the
 * caller's transaction. A revoked grant stays revoked, so enabling the person
 * again brings none of it back.
 */
import "server-only";
import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Transaction } from "../../db/client";
import {
  type ACCOUNT_EVENT_TYPES,
  accountAuditLog,
  apiKeys,
  oauthAuthorizationCodes,
  oauthGrants,
  oauthTokens,
} from "../../db/schema";
import type { ServiceContext } from "../shared/context";

export type EndedCredentials = { appsRevoked: number; apiKeysRevoked: number };

export async function endCredentials(
  tx: Transaction,
  ctx: ServiceContext,
  person: { userId: string; email: string },
  what: { apps: boolean; apiKeys: boolean },
): Promise<EndedCredentials> {
  const now = new Date();
  // A code is a session's approval on its way to becoming a connected app:
  // every session ends here, so do the codes (whoever learnt the old password
  // may have approved their own client and kept its code). The token endpoint
  // also refuses a code issued before this trail row (docs/oauth.md).
  await tx
    .delete(oauthAuthorizationCodes)
    .where(
      and(
        eq(oauthAuthorizationCodes.userId, person.userId),
        isNull(oauthAuthorizationCodes.usedAt),
      ),
    );
  const grants = what.apps
    ? await tx
        .update(oauthGrants)
        .set({ revokedAt: now })
        .where(
          and(
            eq(oauthGrants.userId, person.userId),
            eq(oauthGrants.tenantId, ctx.tenantId),
            isNull(oauthGrants.revokedAt),
          ),
        )
        .returning({ id: oauthGrants.id })
    : [];
  if (grants.length > 0) {
    await tx
      .update(oauthTokens)
      .set({ revokedAt: now })
      .where(
        and(
          inArray(
            oauthTokens.grantId,
            grants.map((grant) => grant.id),
          ),
          isNull(oauthTokens.revokedAt),
        ),
      );
  }
  const keys = what.apiKeys
    ? await tx
        .update(apiKeys)
        .set({ revokedAt: now })
        .where(
          and(
            eq(apiKeys.userId, person.userId),
            eq(apiKeys.tenantId, ctx.tenantId),
            isNull(apiKeys.revokedAt),
          ),
        )
        .returning({ id: apiKeys.id })
    : [];
  return { appsRevoked: grants.length, apiKeysRevoked: keys.length };
}

/** One row of the account trail, in the transaction of the change it records. */
export async function writeAccountAudit(
  tx: Transaction,
  ctx: ServiceContext,
  person: { userId: string; email: string },
  eventType: (typeof ACCOUNT_EVENT_TYPES)[number],
  payload: Record<string, unknown>,
): Promise<void> {
  await tx.insert(accountAuditLog).values({
    tenantId: ctx.tenantId,
    userId: person.userId,
    userEmail: person.email,
    eventType,
    actorType: ctx.actor.type,
    actorId: ctx.actor.id,
    actorLabel: ctx.actor.label,
    payload,
  });
}
