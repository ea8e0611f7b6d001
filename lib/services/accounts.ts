/**
 * Tenants, users and API keys: the use cases behind the admin CLI (and, later,
 * the admin pages). Each runs in one transaction.
 */
import { eq, sql } from "drizzle-orm";
import { z } from "zod";
import { generateApiKey } from "../auth/api-key";
import { hashPassword } from "../auth/password";
import type { Database } from "../db/client";
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

export async function createUser(
  db: Database,
  raw: z.input<typeof createUserInput>,
): Promise<CreatedUser> {
  const input = parseInput(createUserInput, raw);
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const taken = await tx
      .select({ id: users.id })
      .from(users)
      .where(sql`lower(${users.email}) = ${input.email}`);
    if (taken.length > 0) {
      throw new AppError("CONFLICT", `A user with the e-mail ${input.email} already exists.`);
    }
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
    const [user] = await tx
      .insert(users)
      .values({
        tenantId,
        email: input.email,
        name: input.name,
        passwordHash,
        role: input.role,
      })
      .returning({ id: users.id });
    if (!user) throw new AppError("INTERNAL_ERROR", "The user was not created.");
    return { userId: user.id, tenantId, tenantCreated };
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
): Promise<CreatedApiKey> {
  const input = parseInput(createApiKeyInput, raw);
  const [user] = await db
    .select({ id: users.id, tenantId: users.tenantId })
    .from(users)
    .where(sql`lower(${users.email}) = ${input.email}`);
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
