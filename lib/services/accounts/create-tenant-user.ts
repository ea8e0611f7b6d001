/** An admin adds a user to their own tenant (the admin page). */
import "server-only";
import type { z } from "zod";
import type { ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import { createUserInput } from "./create-user";
import { insertUser } from "./insert-user";
import { hashPassword } from "./password";

export const createTenantUserInput = createUserInput.omit({ tenant: true });

export async function createTenantUser(
  ctx: ServiceContext,
  raw: z.input<typeof createTenantUserInput>,
): Promise<{ userId: string }> {
  const input = parseInput(createTenantUserInput, raw);
  const passwordHash = await hashPassword(input.password);
  return {
    userId: await ctx.db.transaction((tx) => insertUser(tx, ctx.tenantId, input, passwordHash)),
  };
}
