/**
 * Checks an e-mail and password. Like every use case that runs before anyone is
 * signed in, it takes the database and one input object, not a ServiceContext:
 * there is no tenant or actor yet (docs/architecture.md).
 */
import "server-only";
import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { users } from "../../db/schema";
import { logWarning } from "../../log";
import { DUMMY_PASSWORD_HASH, verifyPassword } from "./password";
import type { SessionClaims } from "./signed-in-user";
import { upgradePasswordHash } from "./upgrade-password-hash";

export type CredentialsCheck =
  | { kind: "ok"; user: SessionClaims }
  | { kind: "invalid" }
  /** The password is right but an admin has disabled the account. */
  | { kind: "disabled" };

export type Credentials = { email: string; password: string };

/**
 * The same answer, and the same time, for an unknown e-mail and a wrong
 * password. Only someone who knows the password learns that the account is
 * disabled.
 */
export async function checkCredentials(
  db: Database,
  { email, password }: Credentials,
): Promise<CredentialsCheck> {
  const [user] = await db
    .select()
    .from(users)
    .where(sql`lower(${users.email}) = ${email.trim().toLowerCase()}`);
  if (!user) {
    // Spend the same time as a real check, so timing does not reveal which e-mails exist.
    await verifyPassword(password, DUMMY_PASSWORD_HASH);
    return { kind: "invalid" };
  }
  if (!(await verifyPassword(password, user.passwordHash))) return { kind: "invalid" };
  if (user.disabledAt) return { kind: "disabled" };
  try {
    await upgradePasswordHash(db, { userId: user.id, password, verifiedHash: user.passwordHash });
  } catch (error) {
    // The upgrade is opportunistic: the next sign-in tries again, and this one stands.
    logWarning(`Cairn: could not upgrade the password hash of user ${user.id}`, error);
  }
  return {
    kind: "ok",
    user: {
      userId: user.id,
      tenantId: user.tenantId,
      email: user.email,
      name: user.name,
      role: user.role,
      sessionVersion: user.sessionVersion,
    },
  };
}

/** The user these credentials belong to, or undefined (also for a disabled user). */
export async function verifyCredentials(
  db: Database,
  credentials: Credentials,
): Promise<SessionClaims | undefined> {
  const checked = await checkCredentials(db, credentials);
  return checked.kind === "ok" ? checked.user : undefined;
}
