/**
 * Accounts on both databases: attempt limits (counted before any password is
 * hashed, shared through the database), the first-run setup code, and what
 * admins do to users (role, disable, delete) with their effect on sessions and
 * API keys, and on the audit trail.
 */
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { attemptLimits, planAuditLog, researchPlans, setupCodes, users } from "@/lib/db/schema";
import { authenticateApiKey } from "@/lib/services/accounts/api-key-auth";
import {
  ATTEMPT_POLICIES,
  accountKey,
  registerAttempt,
  tryAgainIn,
} from "@/lib/services/accounts/attempt-limits";
import { changeOwnPassword } from "@/lib/services/accounts/change-own-password";
import { verifyCredentials } from "@/lib/services/accounts/check-credentials";
import { createApiKey, createTenantApiKey } from "@/lib/services/accounts/create-api-key";
import { createFirstAdmin } from "@/lib/services/accounts/create-first-admin";
import { createUser } from "@/lib/services/accounts/create-user";
import { deleteTenantUser } from "@/lib/services/accounts/delete-tenant-user";
import { loadSessionUser } from "@/lib/services/accounts/load-session-user";
import { setUserDisabled } from "@/lib/services/accounts/set-user-disabled";
import { setUserRole } from "@/lib/services/accounts/set-user-role";
import { hashSetupCode, issueSetupCode } from "@/lib/services/accounts/setup-codes";
import { signInWithLimits } from "@/lib/services/accounts/sign-in-with-limits";
import { createPlan } from "@/lib/services/plans/create-plan";
import type { ServiceContext } from "@/lib/services/shared/context";
import { BACKENDS, freshDatabase } from "./support/databases";

// Counts the password hashes, to show that refused attempts never reach one.
const hashing = vi.hoisted(() => ({ verifications: 0, hashes: 0 }));
vi.mock("@/lib/services/accounts/password", async (importOriginal) => {
  const real = await importOriginal<typeof import("@/lib/services/accounts/password")>();
  return {
    ...real,
    verifyPassword: async (password: string, stored: string) => {
      hashing.verifications++;
      return real.verifyPassword(password, stored);
    },
    hashPassword: async (password: string) => {
      hashing.hashes++;
      return real.hashPassword(password);
    },
  };
});

const PASSWORD = "a long enough password";
const minutes = (n: number) => n * 60_000;

describe.each(BACKENDS)("accounts on %s", (backend) => {
  let handle: DatabaseHandle;
  let admin: { userId: string; tenantId: string };
  let t0: Date;
  const at = (ms: number) => new Date(t0.getTime() + ms);

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    admin = await createUser(handle.db, {
      email: "ada@example.com",
      password: PASSWORD,
      role: "admin",
      tenant: "Acme",
    });
    await createUser(handle.db, {
      email: "bob@example.com",
      password: PASSWORD,
      role: "researcher",
      tenant: "Acme",
    });
  });
  afterAll(async () => {
    await handle?.close();
  });
  beforeEach(async () => {
    await handle.db.delete(attemptLimits);
    // Well past any real clock, so the pruning of day-old counters leaves these alone.
    t0 = new Date(Date.now() + minutes(60 * 24 * 365));
  });

  const signIn = (email: string, password: string, when: Date, address = "10.0.0.1") =>
    signInWithLimits(handle.db, { email, password }, { address, now: when });
  /** A user's context, as the web door builds it from their session (lib/auth/session.ts). */
  const as = (user: { userId: string; tenantId: string }): ServiceContext => ({
    db: handle.db,
    tenantId: user.tenantId,
    actor: { type: "user", id: user.userId, label: user.userId },
    stallThresholdSeconds: 1800,
  });

  describe("sign-in attempt limits", () => {
    it("refuse the sixth attempt on an e-mail within 15 minutes before hashing, then back off doubling", async () => {
      for (let i = 0; i < 5; i++) {
        expect((await signIn("bob@example.com", "wrong", at(i * 1000))).kind).toBe("invalid");
      }
      const before = hashing.verifications;
      const refused = await signIn("bob@example.com", PASSWORD, at(6000));
      expect(refused).toEqual({ kind: "too_many_attempts", retryAt: at(6000 + minutes(1)) });
      // Refused while blocked, even with the right password, and never hashed.
      expect((await signIn("Bob@Example.com ", PASSWORD, at(30_000))).kind).toBe(
        "too_many_attempts",
      );
      expect(hashing.verifications).toBe(before);

      // After the first block: five more tries, then a block twice as long.
      const afterBlock = 6000 + minutes(1);
      for (let i = 0; i < 5; i++) {
        expect((await signIn("bob@example.com", "wrong", at(afterBlock + i))).kind).toBe("invalid");
      }
      const second = await signIn("bob@example.com", "wrong", at(afterBlock + 10));
      expect(second).toEqual({
        kind: "too_many_attempts",
        retryAt: at(afterBlock + 10 + minutes(2)),
      });
    });

    it("refuse an unknown e-mail exactly as a known one, so refusals reveal no account", async () => {
      for (let i = 0; i < 5; i++) {
        expect((await signIn("nobody@example.com", "wrong", at(i))).kind).toBe("invalid");
      }
      expect(await signIn("nobody@example.com", "wrong", at(10))).toEqual({
        kind: "too_many_attempts",
        retryAt: at(10 + minutes(1)),
      });
    });

    it("count within a 15-minute window, and a success clears the e-mail's counter", async () => {
      for (let i = 0; i < 4; i++) await signIn("bob@example.com", "wrong", at(i));
      // The window is over: counting starts again.
      for (let i = 0; i < 5; i++) {
        expect((await signIn("bob@example.com", "wrong", at(minutes(16) + i))).kind).toBe(
          "invalid",
        );
      }
      await handle.db.delete(attemptLimits);
      for (let i = 0; i < 4; i++) await signIn("bob@example.com", "wrong", at(i));
      expect((await signIn("bob@example.com", PASSWORD, at(10))).kind).toBe("ok");
      for (let i = 0; i < 5; i++) {
        expect((await signIn("bob@example.com", "wrong", at(20 + i))).kind).toBe("invalid");
      }
    });

    it("cap one client address across e-mails, and a success does not lift it", async () => {
      const { limit } = ATTEMPT_POLICIES.sign_in_address;
      const address = "203.0.113.9";
      // Counted without hashing: the address counter is what this test is about.
      for (let i = 0; i < limit - 1; i++) {
        const gate = await registerAttempt(
          handle.db,
          [accountKey(`user${i}@example.com`), { kind: "sign_in_address", key: address }],
          at(i),
        );
        expect(gate.allowed).toBe(true);
      }
      expect((await signIn("bob@example.com", PASSWORD, at(limit), address)).kind).toBe("ok");
      const refused = await signIn("ada@example.com", PASSWORD, at(limit + 1), address);
      expect(refused).toEqual({
        kind: "too_many_attempts",
        retryAt: at(limit + 1 + minutes(5)),
      });
      // Another address is not affected.
      expect((await signIn("ada@example.com", PASSWORD, at(limit + 2), "10.9.9.9")).kind).toBe(
        "ok",
      );
    });

    it("let exactly five of many simultaneous attempts through (one upsert each, no read-then-write gap)", async () => {
      const gates = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          registerAttempt(
            handle.db,
            [accountKey("race@example.com"), { kind: "sign_in_address", key: `10.1.0.${i}` }],
            at(0),
          ),
        ),
      );
      expect(gates.filter((gate) => gate.allowed)).toHaveLength(5);
      const [row] = await handle.db
        .select()
        .from(attemptLimits)
        .where(eq(attemptLimits.key, accountKey("race@example.com").key));
      expect(row?.blockedUntil).toEqual(at(minutes(1)));
      // The table keeps a hash of the e-mail, not the e-mail.
      expect(JSON.stringify(row)).not.toContain("race@example.com");
    });

    it("word the refusal with the time to wait", () => {
      expect(tryAgainIn(at(minutes(4) - 1000), at(0))).toBe("Try again in 4 minutes.");
      expect(tryAgainIn(at(45_000), at(0))).toBe("Try again in 45 seconds.");
      expect(tryAgainIn(at(60_000), at(0))).toBe("Try again in 1 minute.");
    });
  });

  describe("changing one's own password", () => {
    it("needs the current password, ends every session, and counts toward the limits", async () => {
      const bob = await verifyCredentials(handle.db, {
        email: "bob@example.com",
        password: PASSWORD,
      });
      if (!bob) throw new Error("bob cannot sign in");
      await expect(
        changeOwnPassword(
          as(bob),
          { currentPassword: "wrong", newPassword: "a new long password" },
          { address: "10.0.0.2", now: at(0) },
        ),
      ).rejects.toThrow(/not your current password/);
      expect(await loadSessionUser(handle.db, bob)).not.toBeNull();

      await changeOwnPassword(
        as(bob),
        { currentPassword: PASSWORD, newPassword: "a new long password" },
        { address: "10.0.0.2", now: at(1) },
      );
      // The session issued before the change ends; a new sign-in carries the new version.
      expect(await loadSessionUser(handle.db, bob)).toBeNull();
      expect(
        await verifyCredentials(handle.db, { email: "bob@example.com", password: PASSWORD }),
      ).toBeUndefined();
      const again = await verifyCredentials(handle.db, {
        email: "bob@example.com",
        password: "a new long password",
      });
      expect(again?.sessionVersion).toBe(bob.sessionVersion + 1);
      expect(await loadSessionUser(handle.db, again ?? bob)).toMatchObject({
        email: "bob@example.com",
      });

      for (let i = 0; i < 5; i++) {
        await expect(
          changeOwnPassword(
            as(bob),
            { currentPassword: "wrong", newPassword: "whatever long" },
            { address: "10.0.0.2", now: at(10 + i) },
          ),
        ).rejects.toThrow(/not your current password/);
      }
      await expect(
        changeOwnPassword(
          as(bob),
          { currentPassword: "a new long password", newPassword: "whatever long" },
          { address: "10.0.0.2", now: at(20) },
        ),
      ).rejects.toThrow("Too many password attempts. Try again in 1 minute.");

      // Back to the shared password for the tests below.
      await handle.db.delete(attemptLimits);
      await changeOwnPassword(
        as(bob),
        { currentPassword: "a new long password", newPassword: PASSWORD },
        { address: "10.0.0.2" },
      );
    });
  });

  describe("what an admin does to other users", () => {
    let carol: { userId: string; key: string };

    beforeAll(async () => {
      const created = await createUser(handle.db, {
        email: "carol@example.com",
        password: PASSWORD,
        role: "researcher",
        tenant: "Acme",
        name: "Carol",
      });
      const key = await createApiKey(handle.db, { email: "carol@example.com", name: "laptop" });
      carol = { userId: created.userId, key: key.key };
    });

    it("a role change applies to the session at once", async () => {
      const session = await verifyCredentials(handle.db, {
        email: "carol@example.com",
        password: PASSWORD,
      });
      if (!session) throw new Error("carol cannot sign in");
      expect(session.role).toBe("researcher");
      await setUserRole(as(admin), { userId: carol.userId, role: "admin" });
      // Same token, read again: the role is the database's.
      expect((await loadSessionUser(handle.db, session))?.role).toBe("admin");
      await setUserRole(as(admin), { userId: carol.userId, role: "researcher" });
      expect((await loadSessionUser(handle.db, session))?.role).toBe("researcher");
    });

    it("disabling ends sessions and stops API keys at once; enabling restores keys and sign-in, not old sessions", async () => {
      const session = await verifyCredentials(handle.db, {
        email: "carol@example.com",
        password: PASSWORD,
      });
      if (!session) throw new Error("carol cannot sign in");
      expect(await authenticateApiKey(handle.db, carol.key)).toBeDefined();

      await setUserDisabled(as(admin), { userId: carol.userId, disabled: true });
      expect(await loadSessionUser(handle.db, session)).toBeNull();
      expect(await authenticateApiKey(handle.db, carol.key)).toBeUndefined();
      expect((await signIn("carol@example.com", PASSWORD, at(0))).kind).toBe("disabled");
      expect((await signIn("carol@example.com", "wrong", at(1))).kind).toBe("invalid");
      await expect(createTenantApiKey(as(admin), { email: "carol@example.com" })).rejects.toThrow(
        /is disabled/,
      );

      await setUserDisabled(as(admin), { userId: carol.userId, disabled: false });
      expect(await authenticateApiKey(handle.db, carol.key)).toBeDefined();
      expect(await loadSessionUser(handle.db, session)).toBeNull();
      expect((await signIn("carol@example.com", PASSWORD, at(2))).kind).toBe("ok");
    });

    it("an admin cannot act on themselves, nor leave the team without an admin, nor reach another team", async () => {
      await expect(
        setUserRole(as(admin), { userId: admin.userId, role: "researcher" }),
      ).rejects.toThrow("You cannot change the role of your own account");
      await expect(
        setUserDisabled(as(admin), { userId: admin.userId, disabled: true }),
      ).rejects.toThrow("You cannot disable your own account");
      await expect(deleteTenantUser(as(admin), { userId: admin.userId })).rejects.toThrow(
        "You cannot delete your own account",
      );

      const other = await createUser(handle.db, {
        email: "zed@example.com",
        password: PASSWORD,
        role: "admin",
        tenant: "Elsewhere",
      });
      await expect(
        setUserDisabled(as(admin), { userId: other.userId, disabled: true }),
      ).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
      await expect(deleteTenantUser(as(admin), { userId: "not-a-uuid" })).rejects.toMatchObject({
        code: "VALIDATION_ERROR",
        message: "userId: must be a user id (a UUID).",
      });

      // Two admins: one demotes the other; the demoted one can no longer act.
      const [bob] = await handle.db.select().from(users).where(eq(users.email, "bob@example.com"));
      if (!bob) throw new Error("no bob");
      await setUserRole(as(admin), { userId: bob.id, role: "admin" });
      await setUserRole(as({ userId: bob.id, tenantId: admin.tenantId }), {
        userId: admin.userId,
        role: "researcher",
      });
      await expect(
        setUserRole(as(admin), { userId: bob.id, role: "researcher" }),
      ).rejects.toMatchObject({
        code: "FORBIDDEN",
      });
      await setUserRole(as({ userId: bob.id, tenantId: admin.tenantId }), {
        userId: admin.userId,
        role: "admin",
      });
      await setUserRole(as(admin), { userId: bob.id, role: "researcher" });
    });

    it("deleting a user removes them and their keys, and keeps the audit trail and their plans", async () => {
      const principal = await authenticateApiKey(handle.db, carol.key);
      if (!principal) throw new Error("no principal");
      const plan = await createPlan(
        {
          db: handle.db,
          tenantId: admin.tenantId,
          actor: { type: "api_key", id: principal.apiKeyId, label: principal.label },
          stallThresholdSeconds: 1800,
        },
        {
          name: "Carol's plan",
          researchQuestion: "Does the trail survive?",
          steps: [{ stepType: "search", instructions: "Search." }],
        },
      );
      // Rows as the loop writes them: one by Carol's key, one by Carol in the review panel.
      await handle.db.insert(planAuditLog).values([
        {
          tenantId: admin.tenantId,
          planId: plan.planId,
          eventType: "step_started",
          actorType: "api_key",
          actorId: principal.apiKeyId,
          actorLabel: principal.label,
        },
        {
          tenantId: admin.tenantId,
          planId: plan.planId,
          eventType: "user_reviewed",
          actorType: "user",
          actorId: carol.userId,
          actorLabel: "Carol <carol@example.com>",
        },
      ]);

      await deleteTenantUser(as(admin), { userId: carol.userId });

      expect(await handle.db.select().from(users).where(eq(users.id, carol.userId))).toEqual([]);
      expect(await authenticateApiKey(handle.db, carol.key)).toBeUndefined();
      const [kept] = await handle.db
        .select()
        .from(researchPlans)
        .where(eq(researchPlans.id, plan.planId));
      expect(kept?.createdByKeyId).toBeNull();
      const trail = await handle.db
        .select({ actorLabel: planAuditLog.actorLabel, actorId: planAuditLog.actorId })
        .from(planAuditLog)
        .where(eq(planAuditLog.planId, plan.planId));
      expect(trail.map((row) => row.actorLabel)).toEqual(
        expect.arrayContaining(['key "laptop" of carol@example.com', "Carol <carol@example.com>"]),
      );
      expect(trail.some((row) => row.actorId === carol.userId)).toBe(true);
    });
  });
});

describe.each(BACKENDS)("the first-run set-up on %s", (backend) => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await freshDatabase(backend);
  });
  afterAll(async () => {
    await handle?.close();
  });

  const form = (setupCode: string) => ({
    setupCode,
    email: "first@example.com",
    password: PASSWORD,
    tenant: "First",
  });

  it("needs a current setup code, checked before any hashing, and closes for good", async () => {
    const code = await issueSetupCode(handle.db);
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
    const stored = await handle.db.select().from(setupCodes);
    expect(stored.map((row) => row.codeHash)).toEqual([hashSetupCode(code)]);
    expect(JSON.stringify(stored)).not.toContain(code);

    const before = hashing.hashes;
    await expect(
      createFirstAdmin(handle.db, form("AAAA-BBBB-CCCC-DDDD"), { address: "10.0.0.5" }),
    ).rejects.toThrow(/That setup code is not right/);
    expect(hashing.hashes).toBe(before);

    // A second code works as well as the first; typed in lower case without dashes too.
    await issueSetupCode(handle.db);
    const created = await createFirstAdmin(
      handle.db,
      form(code.toLowerCase().replaceAll("-", "")),
      { address: "10.0.0.5" },
    );
    expect(created.tenantCreated).toBe(true);
    expect(await handle.db.select().from(setupCodes)).toEqual([]);

    const hashesAfter = hashing.hashes;
    await expect(
      createFirstAdmin(
        handle.db,
        { ...form(code), email: "second@example.com" },
        {
          address: "10.0.0.5",
        },
      ),
    ).rejects.toThrow("Cairn is already set up");
    expect(hashing.hashes).toBe(hashesAfter);
    await expect(issueSetupCode(handle.db)).rejects.toThrow("Cairn is already set up");
  });

  it("limits setup-code guesses per client address", async () => {
    const fresh = await freshDatabase(backend);
    try {
      await issueSetupCode(fresh.db);
      const now = new Date(Date.now() + minutes(60 * 24 * 365));
      const { limit } = ATTEMPT_POLICIES.setup_address;
      for (let i = 0; i < limit; i++) {
        await expect(
          createFirstAdmin(fresh.db, form("AAAA-BBBB-CCCC-DDDD"), { address: "10.0.0.6", now }),
        ).rejects.toThrow(/not right/);
      }
      await expect(
        createFirstAdmin(fresh.db, form("AAAA-BBBB-CCCC-DDDD"), { address: "10.0.0.6", now }),
      ).rejects.toThrow("Too many set-up attempts from your address. Try again in 1 minute.");
      const [count] = await fresh.db.select({ n: sql<number>`count(*)::int` }).from(attemptLimits);
      expect(count?.n).toBe(1);
    } finally {
      await fresh.close();
    }
  });
});
