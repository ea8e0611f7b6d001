/**
 * The first-run set-up: creates the first tenant and its admin. Nobody is
 * signed in and no tenant exists yet, so it takes the database, the form, and
 * the caller (the address its attempt limit counts), not a ServiceContext.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { tenants, users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { parseInput } from "../shared/validation";
import { registerAttempt, tryAgainIn } from "./attempt-limits";
import { type CreatedUser, createUserInput } from "./create-user";
import { hasAnyUser } from "./has-any-user";
import { insertUser } from "./insert-user";
import { hashPassword } from "./password";
import { ANOTHER_SETUP_CODE, deleteSetupCodes, isSetupCodeValid } from "./setup-codes";

export const firstAdminInput = createUserInput
  .omit({ role: true })
  .extend({ setupCode: z.string().trim().min(1, "is required: the server printed it at start") });

const ALREADY_SET_UP = "Cairn is already set up: sign in, or ask an admin for an account.";

/**
 * In this order, everything before the password hash cheap: set-up must still
 * be open (nobody has an account), the form valid, the caller's address under
 * its attempt limit, and the setup code one of the current ones. The insert then
 * re-checks under a table lock, so two browsers racing through set-up cannot
 * both become admin, and deletes every setup code.
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
      `That setup code is not right. The server printed it to its log when it started. ${ANOTHER_SETUP_CODE}`,
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
