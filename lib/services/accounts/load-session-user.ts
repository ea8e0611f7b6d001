/**
 * Who a session token's holder is now, read on every request: null when the
 * user was deleted or disabled, or the token predates a password change; the
 * role, name and e-mail are today's, not the token's. It builds the signed-in
 * user a ServiceContext is then made from, so it takes the database.
 */
import "server-only";
import { eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { users } from "../../db/schema";
import type { SignedInUser } from "./signed-in-user";

export async function loadSessionUser(
  db: Database,
  claims: { userId: string; sessionVersion?: number },
): Promise<SignedInUser | null> {
  const [user] = await db
    .select({
      userId: users.id,
      tenantId: users.tenantId,
      email: users.email,
      name: users.name,
      role: users.role,
      disabledAt: users.disabledAt,
      sessionVersion: users.sessionVersion,
    })
    .from(users)
    .where(eq(users.id, claims.userId));
  if (!user || user.disabledAt) return null;
  // Tokens issued before session versions existed carry none: version 0.
  if (user.sessionVersion !== (claims.sessionVersion ?? 0)) return null;
  const { disabledAt: _disabled, sessionVersion: _version, ...signedIn } = user;
  return signedIn;
}
