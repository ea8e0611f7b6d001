/**
 * Tenants, users and API keys: the use cases behind the admin CLI and the admin
 * pages. Each runs in one transaction.
 */
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import { generateApiKey } from "../../auth/api-key";
import {
  DUMMY_PASSWORD_HASH,
  hashPassword,
  needsRehash,
  verifyPassword,
} from "../../auth/password";
import type { Database, Transaction } from "../../db/client";
import { apiKeys, tenants, USER_ROLES, users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { parseInput } from "../shared/validation";
import {
  type AttemptKey,
  accountKey,
  clearAttempts,
  registerAttempt,
  tryAgainIn,
} from "./attempt-limits";
import { deleteSetupCodes, isSetupCodeValid } from "./setup-codes";

export const createUserInput = z.object({
  email: z.string().trim().toLowerCase().pipe(z.email("must be an e-mail address")),
  password: z.string().min(8, "must be at least 8 characters").max(200),
  role: z.enum(USER_ROLES),
  tenant: z.string().trim().min(1, "must not be empty").max(200),
  name: z.string().trim().max(200).optional(),
});

export type CreatedUser = { userId: string; tenantId: string; tenantCreated: boolean };

/** Whether a database error is a unique-index violation (SQLSTATE 23505), however the driver wraps it. */
function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error; e && typeof e === "object"; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === "23505") return true;
  }
  return false;
}

/** The refusal when an e-mail is taken: in this team, or in another one the admin cannot see. */
function emailTaken(email: string, sameTenant: boolean | null): AppError {
  if (sameTenant) {
    return new AppError("CONFLICT", `${email} is already a user of this team.`, { email });
  }
  return new AppError(
    "CONFLICT",
    sameTenant === false
      ? `${email} already belongs to an account in another team. An e-mail address signs in to one team only, so it cannot be added here: use a different address.`
      : `A user with the e-mail ${email} already exists (an e-mail address signs in to one team only): use a different address.`,
    { email },
  );
}

/**
 * Adds a user to a tenant inside the caller's transaction. The e-mail is the
 * sign-in name, so it must be free in every tenant (the unique index on
 * lower(email) backs this check against races). A taken e-mail is a CONFLICT
 * that says whether it is taken in this tenant or in another one.
 */
async function insertUser(
  tx: Transaction,
  tenantId: string,
  input: { email: string; name?: string; role: (typeof USER_ROLES)[number] },
  passwordHash: string,
): Promise<string> {
  const [taken] = await tx
    .select({ tenantId: users.tenantId })
    .from(users)
    .where(sql`lower(${users.email}) = ${input.email}`);
  if (taken) throw emailTaken(input.email, taken.tenantId === tenantId);
  const user = await tx
    .insert(users)
    .values({ tenantId, email: input.email, name: input.name, passwordHash, role: input.role })
    .returning({ id: users.id })
    .then(([row]) => row)
    .catch((error: unknown) => {
      // Someone took the e-mail between the check and the insert.
      if (isUniqueViolation(error)) throw emailTaken(input.email, null);
      throw error;
    });
  if (!user) throw new AppError("INTERNAL_ERROR", "The user was not created.");
  return user.id;
}

/** The CLI's create-user: the tenant is named, and created when new. */
export async function createUser(
  db: Database,
  raw: z.input<typeof createUserInput>,
): Promise<CreatedUser> {
  const input = parseInput(createUserInput, raw);
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const inserted = await tx
      .insert(tenants)
      .values({ name: input.tenant })
      .onConflictDoNothing({ target: tenants.name })
      .returning({ id: tenants.id });
    const tenantCreated = inserted.length > 0;
    const tenantId =
      inserted[0]?.id ??
      (await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.name, input.tenant)))[0]
        ?.id;
    if (!tenantId) throw new AppError("INTERNAL_ERROR", `Tenant ${input.tenant} vanished.`);
    const userId = await insertUser(tx, tenantId, input, passwordHash);
    return { userId, tenantId, tenantCreated };
  });
}

export const createApiKeyInput = z.object({
  email: z.string().trim().toLowerCase().pipe(z.email("must be an e-mail address")),
  name: z.string().trim().min(1).max(200).optional(),
});

export type CreatedApiKey = { apiKeyId: string; key: string; keyPrefix: string; name: string };

/** Returns the key in clear exactly once; only its hash is stored. */
export async function createApiKey(
  db: Database,
  raw: z.input<typeof createApiKeyInput>,
  /** From the admin page: only users of this tenant. The CLI may name any user. */
  scope?: { tenantId: string },
): Promise<CreatedApiKey> {
  const input = parseInput(createApiKeyInput, raw);
  const byEmail = sql`lower(${users.email}) = ${input.email}`;
  const [user] = await db
    .select({ id: users.id, tenantId: users.tenantId, disabledAt: users.disabledAt })
    .from(users)
    .where(scope ? and(byEmail, eq(users.tenantId, scope.tenantId)) : byEmail);
  if (!user) {
    throw new AppError(
      "NOT_FOUND",
      `No user has the e-mail ${input.email}. Create one first with: npm run cairn -- create-user`,
    );
  }
  if (user.disabledAt) {
    throw new AppError(
      "VALIDATION_ERROR",
      `${input.email} is disabled: enable the user first, then create the key.`,
    );
  }
  const generated = generateApiKey();
  const name = input.name ?? `key ${generated.keyPrefix}`;
  const [row] = await db
    .insert(apiKeys)
    .values({
      tenantId: user.tenantId,
      userId: user.id,
      name,
      keyPrefix: generated.keyPrefix,
      keyHash: generated.keyHash,
    })
    .returning({ id: apiKeys.id });
  if (!row) throw new AppError("INTERNAL_ERROR", "The API key was not created.");
  return { apiKeyId: row.id, key: generated.key, keyPrefix: generated.keyPrefix, name };
}

export type SignedInUser = {
  userId: string;
  tenantId: string;
  email: string;
  name: string | null;
  role: (typeof USER_ROLES)[number];
};

/** A signed-in user as the session token carries it: the version ends the token when it changes. */
export type SessionClaims = SignedInUser & { sessionVersion: number };

export type CredentialsCheck =
  | { kind: "ok"; user: SessionClaims }
  | { kind: "invalid" }
  /** The password is right but an admin has disabled the account. */
  | { kind: "disabled" };

/**
 * Checks an e-mail and password: the same answer, and the same time, for an
 * unknown e-mail and a wrong password. Only someone who knows the password learns
 * that the account is disabled.
 */
export async function checkCredentials(
  db: Database,
  email: string,
  password: string,
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
    await upgradePasswordHash(db, user.id, password, user.passwordHash);
  } catch (error) {
    // The upgrade is opportunistic: the next sign-in tries again, and this one stands.
    console.warn(
      `Cairn: could not upgrade the password hash of user ${user.id}: ${error instanceof Error ? error.message : String(error)}`,
    );
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
  email: string,
  password: string,
): Promise<SessionClaims | undefined> {
  const checked = await checkCredentials(db, email, password);
  return checked.kind === "ok" ? checked.user : undefined;
}

/**
 * Who a session token's holder is now, read on every request: null when the
 * user was deleted or disabled, or the token predates a password change; the
 * role, name and e-mail are today's, not the token's.
 */
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

/**
 * Re-hashes a password whose stored hash was made with older scrypt parameters,
 * right after it verified: the only moment Cairn knows the password. The write
 * applies only while the row still holds the hash that verified, so a password
 * changed in the meantime is never overwritten. True when it upgraded the hash.
 */
export async function upgradePasswordHash(
  db: Database,
  userId: string,
  password: string,
  verifiedHash: string,
): Promise<boolean> {
  if (!needsRehash(verifiedHash)) return false;
  const passwordHash = await hashPassword(password);
  const updated = await db
    .update(users)
    .set({ passwordHash })
    .where(and(eq(users.id, userId), eq(users.passwordHash, verifiedHash)))
    .returning({ id: users.id });
  return updated.length > 0;
}

/** Whether anyone has an account yet: the first-run page exists only while nobody does. */
export async function hasAnyUser(db: Database): Promise<boolean> {
  const [row] = await db.select({ id: users.id }).from(users).limit(1);
  return row !== undefined;
}

export const firstAdminInput = createUserInput
  .omit({ role: true })
  .extend({ setupCode: z.string().trim().min(1, "is required: the server printed it at start") });

const ALREADY_SET_UP = "Cairn is already set up: sign in, or ask an admin for an account.";

/**
 * The first-run set-up: creates the first tenant and its admin. In this order,
 * everything before the password hash cheap: set-up must still be open (nobody
 * has an account), the form valid, the caller's address under its attempt limit,
 * and the setup code one of the current ones. The insert then re-checks under a
 * table lock, so two browsers racing through set-up cannot both become admin,
 * and deletes every setup code.
 */
export async function createFirstAdmin(
  db: Database,
  raw: z.input<typeof firstAdminInput>,
  caller: { address: string; now?: Date },
): Promise<CreatedUser> {
  if (await hasAnyUser(db)) throw new AppError("CONFLICT", ALREADY_SET_UP);
  const input = parseInput(firstAdminInput, raw);
  const gate = await registerAttempt(
    db,
    [{ kind: "setup_address", key: caller.address }],
    caller.now,
  );
  if (!gate.allowed) {
    throw new AppError(
      "FORBIDDEN",
      `Too many set-up attempts from your address. ${tryAgainIn(gate.retryAt, caller.now)}`,
      { retryAt: gate.retryAt.toISOString() },
    );
  }
  const wrongCode = () =>
    new AppError(
      "VALIDATION_ERROR",
      "That setup code is not right. The server printed it to its log when it started (run `npm run cairn -- setup-code` for another).",
    );
  if (!(await isSetupCodeValid(db, input.setupCode))) throw wrongCode();
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    await tx.execute(sql`lock table ${users} in share row exclusive mode`);
    const [existing] = await tx.select({ id: users.id }).from(users).limit(1);
    if (existing) throw new AppError("CONFLICT", ALREADY_SET_UP);
    if (!(await isSetupCodeValid(tx, input.setupCode))) throw wrongCode();
    const [tenant] = await tx.insert(tenants).values({ name: input.tenant }).returning();
    if (!tenant) throw new AppError("INTERNAL_ERROR", "The tenant was not created.");
    const userId = await insertUser(tx, tenant.id, { ...input, role: "admin" }, passwordHash);
    await deleteSetupCodes(tx);
    return { userId, tenantId: tenant.id, tenantCreated: true };
  });
}

export const createTenantUserInput = createUserInput.omit({ tenant: true });

/** An admin adds a user to their own tenant (the admin page). */
export async function createTenantUser(
  db: Database,
  tenantId: string,
  raw: z.input<typeof createTenantUserInput>,
): Promise<{ userId: string }> {
  const input = parseInput(createTenantUserInput, raw);
  const passwordHash = await hashPassword(input.password);
  return { userId: await db.transaction((tx) => insertUser(tx, tenantId, input, passwordHash)) };
}

export async function listTenantUsers(db: Database, tenantId: string) {
  return db
    .select({
      userId: users.id,
      email: users.email,
      name: users.name,
      role: users.role,
      createdAt: users.createdAt,
      disabledAt: users.disabledAt,
    })
    .from(users)
    .where(eq(users.tenantId, tenantId))
    .orderBy(users.email);
}

export async function listTenantApiKeys(db: Database, tenantId: string) {
  return db
    .select({
      apiKeyId: apiKeys.id,
      name: apiKeys.name,
      keyPrefix: apiKeys.keyPrefix,
      email: users.email,
      userDisabledAt: users.disabledAt,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(eq(apiKeys.tenantId, tenantId))
    .orderBy(desc(apiKeys.createdAt));
}

/** Revokes a key of the tenant; the MCP route looks keys up on every request, so it stops at once. */
export async function revokeApiKey(db: Database, tenantId: string, apiKeyId: string) {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, apiKeyId), eq(apiKeys.tenantId, tenantId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (!row) {
    throw new AppError("NOT_FOUND", "No active key with that id exists in this account.");
  }
}

/** The e-mail key before the address key: attempt counters are always locked in that order. */
function passwordAttemptKeys(email: string, address: string): AttemptKey[] {
  return [accountKey(email), { kind: "sign_in_address", key: address }];
}

export type SignInOutcome = CredentialsCheck | { kind: "too_many_attempts"; retryAt: Date };

/**
 * Sign-in with attempt limits: the attempt is counted against the e-mail and the
 * client address first (one statement), and refused there, before any password
 * is hashed, when either is over its limit. A refusal is the same whether or not
 * the e-mail has an account. Success clears the e-mail's counter.
 */
export async function signInWithLimits(
  db: Database,
  input: { email: string; password: string; address: string },
  now: Date = new Date(),
): Promise<SignInOutcome> {
  const gate = await registerAttempt(db, passwordAttemptKeys(input.email, input.address), now);
  if (!gate.allowed) return { kind: "too_many_attempts", retryAt: gate.retryAt };
  const checked = await checkCredentials(db, input.email, input.password);
  if (checked.kind !== "invalid") await clearAttempts(db, accountKey(input.email));
  return checked;
}

export const changePasswordInput = z.object({
  currentPassword: z.string().min(1, "is required"),
  newPassword: z.string().min(8, "must be at least 8 characters").max(200),
});

/**
 * A signed-in user changes their own password, which needs the current one (a
 * session left open somewhere must not be enough). Counted against the same
 * limits as sign-in. Raises the session version, so every session of the user
 * ends; the caller signs this one in again with the new password.
 */
export async function changeOwnPassword(
  db: Database,
  user: { userId: string },
  raw: z.input<typeof changePasswordInput>,
  caller: { address: string; now?: Date },
): Promise<void> {
  const input = parseInput(changePasswordInput, raw);
  const [row] = await db
    .select({ email: users.email, passwordHash: users.passwordHash, disabledAt: users.disabledAt })
    .from(users)
    .where(eq(users.id, user.userId));
  if (!row || row.disabledAt) throw new AppError("NOT_FOUND", "Your account no longer exists.");
  const gate = await registerAttempt(
    db,
    passwordAttemptKeys(row.email, caller.address),
    caller.now,
  );
  if (!gate.allowed) {
    throw new AppError(
      "FORBIDDEN",
      `Too many password attempts. ${tryAgainIn(gate.retryAt, caller.now)}`,
      { retryAt: gate.retryAt.toISOString() },
    );
  }
  if (!(await verifyPassword(input.currentPassword, row.passwordHash))) {
    throw new AppError("VALIDATION_ERROR", "That is not your current password.");
  }
  await clearAttempts(db, accountKey(row.email));
  const passwordHash = await hashPassword(input.newPassword);
  const updated = await db
    .update(users)
    .set({ passwordHash, sessionVersion: sql`${users.sessionVersion} + 1` })
    .where(and(eq(users.id, user.userId), eq(users.passwordHash, row.passwordHash)))
    .returning({ id: users.id });
  if (updated.length === 0) {
    throw new AppError(
      "CONFLICT",
      "Your password was changed elsewhere meanwhile: sign in again with the new one.",
    );
  }
}

type Admin = { userId: string; tenantId: string };

/**
 * Runs an admin's change to another user of their tenant, in one transaction
 * holding the tenant's active admins: the acting admin must still be one, and
 * the change may not leave the tenant without an active admin (two admins
 * demoting each other at once: the second is refused).
 */
async function changeTenantUser<T>(
  db: Database,
  admin: Admin,
  targetUserId: string,
  what: { verb: string; removesAdmin: (target: { role: string; disabled: boolean }) => boolean },
  change: (tx: Transaction, target: { email: string }) => Promise<T>,
): Promise<T> {
  if (targetUserId === admin.userId) {
    throw new AppError(
      "VALIDATION_ERROR",
      `You cannot ${what.verb} your own account: another admin of your team can.`,
    );
  }
  if (!z.uuid().safeParse(targetUserId).success) {
    throw new AppError("NOT_FOUND", "No user with that id exists in this account.");
  }
  return db.transaction(async (tx) => {
    const admins = await tx
      .select({ id: users.id })
      .from(users)
      .where(
        and(eq(users.tenantId, admin.tenantId), eq(users.role, "admin"), isNull(users.disabledAt)),
      )
      .for("update");
    if (!admins.some((a) => a.id === admin.userId)) {
      throw new AppError("FORBIDDEN", "You are no longer an admin of this team.");
    }
    const [target] = await tx
      .select({ email: users.email, role: users.role, disabledAt: users.disabledAt })
      .from(users)
      .where(and(eq(users.id, targetUserId), eq(users.tenantId, admin.tenantId)))
      .for("update");
    if (!target) throw new AppError("NOT_FOUND", "No user with that id exists in this account.");
    const activeAdmin = target.role === "admin" && !target.disabledAt;
    if (
      activeAdmin &&
      what.removesAdmin({ role: target.role, disabled: target.disabledAt !== null }) &&
      admins.filter((a) => a.id !== targetUserId).length === 0
    ) {
      throw new AppError("CONFLICT", `${target.email} is the team's last admin.`);
    }
    return change(tx, target);
  });
}

/** Takes effect on the user's next request: sessions read the role from the database. */
export async function setUserRole(
  db: Database,
  admin: Admin,
  targetUserId: string,
  role: (typeof USER_ROLES)[number],
): Promise<{ email: string }> {
  return changeTenantUser(
    db,
    admin,
    targetUserId,
    { verb: "change the role of", removesAdmin: () => role !== "admin" },
    async (tx, target) => {
      await tx.update(users).set({ role }).where(eq(users.id, targetUserId));
      return target;
    },
  );
}

/**
 * Disabling ends the user's sessions and stops their API keys at once (both are
 * checked against the user on every request) and refuses their sign-in; enabling
 * lets them sign in again (old sessions stay ended) and their keys work again.
 */
export async function setUserDisabled(
  db: Database,
  admin: Admin,
  targetUserId: string,
  disabled: boolean,
): Promise<{ email: string }> {
  return changeTenantUser(
    db,
    admin,
    targetUserId,
    { verb: disabled ? "disable" : "enable", removesAdmin: () => disabled },
    async (tx, target) => {
      await tx
        .update(users)
        .set(
          disabled
            ? { disabledAt: new Date(), sessionVersion: sql`${users.sessionVersion} + 1` }
            : { disabledAt: null },
        )
        .where(eq(users.id, targetUserId));
      return target;
    },
  );
}

/**
 * Deletes a user and their API keys. The audit trail stays whole: its rows name
 * their actor by a label kept in the row (actor_id has no foreign key), reviews
 * keep their decider's label, and plans the user created keep existing (their
 * creator becomes unknown: created_by_user_id and created_by_key_id are set null).
 */
export async function deleteTenantUser(
  db: Database,
  admin: Admin,
  targetUserId: string,
): Promise<{ email: string }> {
  return changeTenantUser(
    db,
    admin,
    targetUserId,
    { verb: "delete", removesAdmin: () => true },
    async (tx, target) => {
      await tx.delete(users).where(eq(users.id, targetUserId));
      return target;
    },
  );
}
