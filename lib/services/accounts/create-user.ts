/**
 * The CLI's create-user (scripts/cairn.ts): the tenant is named, and created
 * when new. It takes the database, not a ServiceContext, because it runs for no
 * tenant: it may create the tenant itself (docs/architecture.md).
 */
import "server-only";
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { tenants, USER_ROLES } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { parseInput } from "../shared/validation";
import { insertUser } from "./insert-user";
import { hashPassword } from "./password";

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
