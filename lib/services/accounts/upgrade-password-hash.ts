/**
 * Re-hashes a password whose stored hash was made with older scrypt parameters,
 * right after it verified: the only moment Cairn knows the password. Part of
 * sign-in, so it takes the database, not a ServiceContext (no tenant yet). The
 * write applies only while the row still holds the hash that verified, so a
 * password changed in the meantime is never overwritten. True when it upgraded
 * the hash.
 */
import "server-only";
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { users } from "../../db/schema";
import { hashPassword, needsRehash } from "./password";

export async function upgradePasswordHash(
  db: Database,
  input: { userId: string; password: string; verifiedHash: string },
): Promise<boolean> {
  if (!needsRehash(input.verifiedHash)) return false;
  const passwordHash = await hashPassword(input.password);
  const updated = await db
    .update(users)
    .set({ passwordHash })
    .where(and(eq(users.id, input.userId), eq(users.passwordHash, input.verifiedHash)))
    .returning({ id: users.id });
  return updated.length > 0;
}
