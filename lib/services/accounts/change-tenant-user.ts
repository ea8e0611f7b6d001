/**
 * Internal to an admin's changes to another user of their tenant (set-user-role,
 * set-user-disabled, delete-tenant-user): the admin is the context's actor.
 */
import "server-only";
import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { sameTenant } from "../../db/same-tenant";
import { users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { actingUserId, type ServiceContext } from "../shared/context";
import { recordIdField } from "../shared/fields";
import { parseInput } from "../shared/validation";

/**
 * Runs the change in one transaction holding the tenant's active admins: the
 * acting admin must still be one, and the change may not leave the tenant
 * without an active admin (two admins demoting each other at once: the second
 * is refused).
 */
export async function changeTenantUser<T>(
  ctx: ServiceContext,
  targetUserId: string,
  what: { verb: string; removesAdmin: (target: { role: string; disabled: boolean }) => boolean },
  change: (tx: Transaction, target: { email: string }) => Promise<T>,
): Promise<T> {
  const adminId = actingUserId(ctx);
  if (targetUserId === adminId) {
    throw new AppError(
      "VALIDATION_ERROR",
      `You cannot ${what.verb} your own account: another admin of your team can.`,
    );
  }
  parseInput(z.object({ userId: recordIdField("a user") }), { userId: targetUserId });
  return ctx.db.transaction(async (tx) => {
    const admins = await tx
      .select({ id: users.id })
      .from(users)
      .where(
        and(eq(users.tenantId, ctx.tenantId), eq(users.role, "admin"), isNull(users.disabledAt)),
      )
      .for("update");
    if (!admins.some((a) => a.id === adminId)) {
      throw new AppError("FORBIDDEN", "You are no longer an admin of this team.");
    }
    const [target] = await tx
      .select({ email: users.email, role: users.role, disabledAt: users.disabledAt })
      .from(users)
      .where(and(eq(users.id, targetUserId), sameTenant(users.tenantId, ctx.tenantId)))
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
