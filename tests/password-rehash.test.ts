/**
 * Sign-in upgrades a password hash made with older scrypt parameters, on both
 * databases: verifyCredentials is what Auth.js's credentials provider calls.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { users } from "@/lib/db/schema";
import { verifyCredentials } from "@/lib/services/accounts/check-credentials";
import { createUser } from "@/lib/services/accounts/create-user";
import { hashPassword, needsRehash, verifyPassword } from "@/lib/services/accounts/password";
import { upgradePasswordHash } from "@/lib/services/accounts/upgrade-password-hash";
import { BACKENDS, freshDatabase } from "./support/databases";

/** "correct horse battery", hashed by an earlier release (N = 2^14, r = 8, p = 1). */
const OLD_HASH =
  "scrypt$16384$8$1$5icDu27YD64BT5+YKTa9aA==$wR+XZ8AkZoZUZJz5tJDrq6NuhqF59N+BsTsah1jF3Dc=";
const PASSWORD = "correct horse battery";

describe.each(BACKENDS)("password hash upgrade at sign-in on %s", (backend) => {
  let handle: DatabaseHandle;
  let userId: string;

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    ({ userId } = await createUser(handle.db, {
      email: "ada@example.com",
      password: "set by the test below",
      role: "admin",
      tenant: "Acme",
    }));
  });
  afterAll(async () => {
    await handle?.close();
  });

  const storedHash = async () =>
    (await handle.db.select().from(users).where(eq(users.id, userId)))[0]?.passwordHash ?? "";
  const setHash = (passwordHash: string) =>
    handle.db.update(users).set({ passwordHash }).where(eq(users.id, userId));

  it("a wrong password leaves an old hash as it is", async () => {
    await setHash(OLD_HASH);
    expect(
      await verifyCredentials(handle.db, { email: "ada@example.com", password: "wrong password" }),
    ).toBeUndefined();
    expect(await storedHash()).toBe(OLD_HASH);
  });

  it("signing in with an old hash re-hashes the password with today's parameters", async () => {
    await setHash(OLD_HASH);
    const user = await verifyCredentials(handle.db, {
      email: "Ada@Example.com",
      password: PASSWORD,
    });
    expect(user).toMatchObject({ userId, email: "ada@example.com", role: "admin" });

    const upgraded = await storedHash();
    expect(upgraded).not.toBe(OLD_HASH);
    expect(upgraded).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(needsRehash(upgraded)).toBe(false);
    expect(await verifyPassword(PASSWORD, upgraded)).toBe(true);

    // The next sign-in verifies against the new hash and leaves it alone.
    expect(
      await verifyCredentials(handle.db, { email: "ada@example.com", password: PASSWORD }),
    ).toBeDefined();
    expect(await storedHash()).toBe(upgraded);
  });

  it("does not overwrite a password changed since the old hash verified", async () => {
    const changed = await hashPassword("a newer password");
    await setHash(changed);
    expect(
      await upgradePasswordHash(handle.db, { userId, password: PASSWORD, verifiedHash: OLD_HASH }),
    ).toBe(false);
    expect(await storedHash()).toBe(changed);
  });
});
