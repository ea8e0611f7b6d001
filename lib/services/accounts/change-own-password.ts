/**
 * A signed-in user (the context's actor) changes their own password, which
 * needs the current one (a session left open somewhere must not be enough).
 * Counted against the same limits as sign-in, so besides the form it takes the
 * caller's address. Raises the session version, so every session of the user
 * ends; the caller signs this one in again with the new password. Unless the
 * person unticks it, it also ends every connected app and API key of theirs
 * (whoever learnt the old password may have made one), and says what ended.
 * Recorded in the account trail.
 */
import "server-only";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { sameTenant } from "../../db/same-tenant";
import { users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { actingUserId, type ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import {
  accountKey,
  clearAttempts,
  passwordAttemptKeys,
  registerAttempt,
  tryAgainIn,
} from "./attempt-limits";
import { type EndedCredentials, endCredentials, writeAccountAudit } from "./end-credentials";
import { hashPassword, verifyPassword } from "./password";

export const changePasswordInput = z.object({
  currentPassword: z.string().min(1, "is required"),
  newPassword: z.string().min(8, "must be at least 8 characters").max(200),
  /** The form's checkbox, ticked by default: "on" also ends connected apps and API keys. */
  signOutEverywhere: z.enum(["on"]).optional(),
});

export type PasswordChanged = EndedCredentials & { everywhere: boolean };

export async function changeOwnPassword(
  ctx: ServiceContext,
  raw: z.input<typeof changePasswordInput>,
  caller: { address: string; now?: Date },
): Promise<PasswordChanged> {
  const input = parseInput(changePasswordInput, raw);
  const userId = actingUserId(ctx);
  const { db } = ctx;
  const [row] = await db
    .select({ email: users.email, passwordHash: users.passwordHash, disabledAt: users.disabledAt })
    .from(users)
    .where(and(eq(users.id, userId), sameTenant(users.tenantId, ctx.tenantId)));
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
  const everywhere = input.signOutEverywhere === "on";
  const person = { userId, email: row.email };
  return db.transaction(async (tx) => {
    const updated = await tx
      .update(users)
      .set({ passwordHash, sessionVersion: sql`${users.sessionVersion} + 1` })
      .where(and(eq(users.id, userId), eq(users.passwordHash, row.passwordHash)))
      .returning({ id: users.id });
    if (updated.length === 0) {
      throw new AppError(
        "CONFLICT",
        "Your password was changed elsewhere meanwhile: sign in again with the new one.",
      );
    }
    const ended = await endCredentials(tx, ctx, person, {
      apps: everywhere,
      apiKeys: everywhere,
    });
    await writeAccountAudit(tx, ctx, person, "password_changed", {
      sessionsEnded: true,
      ...ended,
    });
    return { ...ended, everywhere };
  });
}

/** What a password change ended, in words for the person who made it. */
export function describePasswordChange(changed: PasswordChanged): string {
  if (!changed.everywhere) {
    return "Password changed. Your other sessions are signed out; your connected apps and API keys keep working.";
  }
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return `Password changed. Ended: your other sessions, ${count(changed.appsRevoked, "connected app", "connected apps")} and ${count(changed.apiKeysRevoked, "API key", "API keys")}.`;
}
