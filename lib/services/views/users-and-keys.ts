/** The admin page's read models of the tenant's users and API keys. */
import "server-only";
import { desc, eq } from "drizzle-orm";
import { apiKeys, users } from "../../db/schema";
import type { ServiceContext } from "../shared/context";

export async function listTenantUsers(ctx: ServiceContext) {
  return ctx.db
    .select({
      userId: users.id,
      email: users.email,
      name: users.name,
      role: users.role,
      createdAt: users.createdAt,
      disabledAt: users.disabledAt,
    })
    .from(users)
    .where(eq(users.tenantId, ctx.tenantId))
    .orderBy(users.email);
}

export async function listTenantApiKeys(ctx: ServiceContext) {
  return ctx.db
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
    .where(eq(apiKeys.tenantId, ctx.tenantId))
    .orderBy(desc(apiKeys.createdAt));
}
