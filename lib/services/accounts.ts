/**
 * Tenants, users and API keys: the use cases behind the admin CLI (and, later,
 * the admin pages). Each runs in one transaction.
 */
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import { generateApiKey } from "../auth/api-key";
import { DUMMY_PASSWORD_HASH, hashPassword, needsRehash, verifyPassword } from "../auth/password";
import type { Database, Transaction } from "../db/client";
import { apiKeys, tenants, USER_ROLES, users } from "../db/schema";
import { AppError } from "../plan-engine/app-error";
import { parseInput } from "./validation";

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
    .select({ id: users.id, tenantId: users.tenantId })
    .from(users)
    .where(scope ? and(byEmail, eq(users.tenantId, scope.tenantId)) : byEmail);
  if (!user) {
    throw new AppError(
      "NOT_FOUND",
      `No user has the e-mail ${input.email}. Create one first with: npm run cairn -- create-user`,
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

/** The user these credentials belong to, or undefined; the same answer for an unknown e-mail and a wrong password. */
export async function verifyCredentials(
  db: Database,
  email: string,
  password: string,
): Promise<SignedInUser | undefined> {
  const [user] = await db
    .select()
    .from(users)
    .where(sql`lower(${users.email}) = ${email.trim().toLowerCase()}`);
  if (!user) {
    // Spend the same time as a real check, so timing does not reveal which e-mails exist.
    await verifyPassword(password, DUMMY_PASSWORD_HASH);
    return undefined;
  }
  if (!(await verifyPassword(password, user.passwordHash))) return undefined;
  try {
    await upgradePasswordHash(db, user.id, password, user.passwordHash);
  } catch (error) {
    // The upgrade is opportunistic: the next sign-in tries again, and this one stands.
    console.warn(
      `Cairn: could not upgrade the password hash of user ${user.id}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return {
    userId: user.id,
    tenantId: user.tenantId,
    email: user.email,
    name: user.name,
    role: user.role,
  };
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

/**
 * The first-run set-up: creates the first tenant and its admin, but only while no
 * user exists, checked inside the transaction under a table lock, so two
 * browsers racing through set-up cannot both become admin.
 */
export async function createFirstAdmin(
  db: Database,
  raw: Omit<z.input<typeof createUserInput>, "role">,
): Promise<CreatedUser> {
  const input = parseInput(createUserInput, { ...raw, role: "admin" });
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    await tx.execute(sql`lock table ${users} in share row exclusive mode`);
    const [existing] = await tx.select({ id: users.id }).from(users).limit(1);
    if (existing) {
      throw new AppError(
        "CONFLICT",
        "Cairn is already set up: sign in, or ask an admin for an account.",
      );
    }
    const [tenant] = await tx.insert(tenants).values({ name: input.tenant }).returning();
    if (!tenant) throw new AppError("INTERNAL_ERROR", "The tenant was not created.");
    const userId = await insertUser(tx, tenant.id, input, passwordHash);
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
