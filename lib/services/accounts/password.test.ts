import { describe, expect, it } from "vitest";
import {
  DUMMY_PASSWORD_HASH,
  hashPassword,
  needsRehash,
  PASSWORD_COST,
  verifyPassword,
} from "./password";

/** "correct horse battery", hashed by an earlier release (N = 2^14, r = 8, p = 1). */
const OLD_HASH =
  "scrypt$16384$8$1$5icDu27YD64BT5+YKTa9aA==$wR+XZ8AkZoZUZJz5tJDrq6NuhqF59N+BsTsah1jF3Dc=";

describe("password hashes", () => {
  it("are made with N = 2^17, r = 8, p = 1, named in the hash, and verify", async () => {
    expect(PASSWORD_COST).toEqual({ N: 131072, r: 8, p: 1 });
    const stored = await hashPassword("correct horse battery");
    expect(stored).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(await verifyPassword("correct horse battery", stored)).toBe(true);
    expect(await verifyPassword("correct horse batterY", stored)).toBe(false);
    expect(needsRehash(stored)).toBe(false);
  });

  it("still verify when an earlier release made them with N = 2^14, and ask to be re-hashed", async () => {
    expect(await verifyPassword("correct horse battery", OLD_HASH)).toBe(true);
    expect(await verifyPassword("wrong", OLD_HASH)).toBe(false);
    expect(needsRehash(OLD_HASH)).toBe(true);
  });

  it("refuse malformed hashes and parameters out of bounds without trying them", async () => {
    for (const stored of [
      "",
      "bcrypt$2b$10$abc",
      "scrypt$16384$8$1$c2FsdA==",
      "scrypt$16385$8$1$c2FsdA==$aGFzaA==",
      `scrypt$${2 ** 24}$8$1$c2FsdA==$aGFzaA==`,
      "scrypt$16384$0$1$c2FsdA==$aGFzaA==",
      "scrypt$16384$8$99$c2FsdA==$aGFzaA==",
      "scrypt$16384$8$1$c2FsdA==$aGFzaA==$extra",
    ]) {
      expect(await verifyPassword("anything", stored), stored).toBe(false);
      expect(needsRehash(stored), stored).toBe(true);
    }
  });

  it("has a dummy hash of today's cost for unknown e-mails, which no password matches", async () => {
    expect(needsRehash(DUMMY_PASSWORD_HASH)).toBe(false);
    expect(await verifyPassword("", DUMMY_PASSWORD_HASH)).toBe(false);
  });
});
