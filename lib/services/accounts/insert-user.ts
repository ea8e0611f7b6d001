/**
 * Internal to the account use cases that add a user (create-user, create-tenant-user,
 * create-first-admin): the insert and its refusal when the e-mail is taken.
 */
import "server-only";
import { sql } from "drizzle-orm";
import type { Transaction } from "../../db/client";
import { type USER_ROLES, users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";

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
export async function insertUser(
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
