/**
 * Issues an API key to a user, from two doors: the admin page
 * (createTenantApiKey: only users of the admin's tenant) and the CLI
 * (createApiKey: any user, named by e-mail, for no tenant in particular, so it
 * takes the database rather than a ServiceContext; docs/architecture.md).
 * Returns the key in clear exactly once; only its hash is stored.
 */
import "server-only";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { apiKeys, users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import type { ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import { generateApiKey } from "./api-key";

export const createApiKeyInput = z.object({
  email: z.string().trim().toLowerCase().pipe(z.email("must be an e-mail address")),
  name: z.string().trim().min(1).max(200).optional(),
});

export type CreatedApiKey = { apiKeyId: string; key: string; keyPrefix: string; name: string };

/** The CLI's create-api-key: any user of any tenant. */
export async function createApiKey(
  db: Database,
  raw: z.input<typeof createApiKeyInput>,
): Promise<CreatedApiKey> {
  return issueApiKey(db, raw);
}

/** An admin creates a key for a user of their own tenant. */
export async function createTenantApiKey(
  ctx: ServiceContext,
  raw: z.input<typeof createApiKeyInput>,
): Promise<CreatedApiKey> {
  return issueApiKey(ctx.db, raw, ctx.tenantId);
}

async function issueApiKey(
  db: Database,
  raw: z.input<typeof createApiKeyInput>,
  tenantId?: string,
): Promise<CreatedApiKey> {
  const input = parseInput(createApiKeyInput, raw);
  const byEmail = sql`lower(${users.email}) = ${input.email}`;
  const [user] = await db
    .select({ id: users.id, tenantId: users.tenantId, disabledAt: users.disabledAt })
    .from(users)
    .where(tenantId === undefined ? byEmail : and(byEmail, eq(users.tenantId, tenantId)));
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
