"use server";

import { revalidatePath } from "next/cache";
import { requireAdmin, userContext } from "@/lib/auth/session";
import { USER_ROLES } from "@/lib/db/schema";
import {
  createApiKey,
  createTenantUser,
  deleteTenantUser,
  revokeApiKey,
  setUserDisabled,
  setUserRole,
} from "@/lib/services/accounts";
import { revokeConnectedApp } from "@/lib/services/connected-apps";
import { type ActionState, actionError, field } from "@/lib/web/action-state";

export async function createUserAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const admin = await requireAdmin();
  const role = USER_ROLES.find((r) => r === field(form, "role")) ?? "researcher";
  try {
    const { db } = await userContext(admin);
    await createTenantUser(db, admin.tenantId, {
      email: field(form, "email") ?? "",
      password: field(form, "password") ?? "",
      name: field(form, "name") || undefined,
      role,
    });
  } catch (error) {
    return actionError(error);
  }
  revalidatePath("/admin/users");
  return { status: "success", message: `Created ${role} ${field(form, "email")}.` };
}

/** The key is returned once, to be shown once; only its hash is stored. */
export async function createKeyAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const admin = await requireAdmin();
  try {
    const { db } = await userContext(admin);
    const created = await createApiKey(
      db,
      { email: field(form, "email") ?? "", name: field(form, "name") || undefined },
      { tenantId: admin.tenantId },
    );
    revalidatePath("/admin/users");
    return {
      status: "success",
      message: `Created key "${created.name}". Copy it now: it is shown only once.`,
      data: { key: created.key, name: created.name },
    };
  } catch (error) {
    return actionError(error);
  }
}

/** Revokes a connected app (an OAuth grant) of the team: its tokens stop at once. */
export async function revokeAppAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const admin = await requireAdmin();
  try {
    const { db } = await userContext(admin);
    await revokeConnectedApp(db, admin.tenantId, field(form, "grantId") ?? "");
  } catch (error) {
    return actionError(error);
  }
  revalidatePath("/admin/users");
  return { status: "success", message: "App revoked: its tokens no longer work." };
}

export async function revokeKeyAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const admin = await requireAdmin();
  try {
    const { db } = await userContext(admin);
    await revokeApiKey(db, admin.tenantId, field(form, "apiKeyId") ?? "");
  } catch (error) {
    return actionError(error);
  }
  revalidatePath("/admin/users");
  return { status: "success", message: "Key revoked: it no longer works." };
}

/**
 * The users table's buttons (one form): `op` is "<what>:<userId>", what being
 * make-admin, make-researcher, disable, enable or delete. Disabling ends the
 * user's sessions and stops their API keys at once; a role change applies from
 * their next request; deleting removes them and their keys, and the audit trail
 * keeps their name.
 */
export async function manageUserAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const admin = await requireAdmin();
  const [what = "", userId = ""] = (field(form, "op") ?? "").split(":");
  try {
    const { db } = await userContext(admin);
    let message: string;
    if (what === "make-admin" || what === "make-researcher") {
      const role = what === "make-admin" ? "admin" : "researcher";
      const { email } = await setUserRole(db, admin, userId, role);
      message = `${email} is now ${role === "admin" ? "an admin" : "a researcher"}.`;
    } else if (what === "disable" || what === "enable") {
      const { email } = await setUserDisabled(db, admin, userId, what === "disable");
      message =
        what === "disable"
          ? `${email} is disabled: signed out everywhere, and their API keys no longer work.`
          : `${email} is enabled: they can sign in again, and their API keys work again.`;
    } else if (what === "delete") {
      const { email } = await deleteTenantUser(db, admin, userId);
      message = `Deleted ${email} and their API keys. The audit trail keeps their name.`;
    } else {
      return { status: "error", message: "Unknown action: reload the page and try again." };
    }
    revalidatePath("/admin/users");
    return { status: "success", message };
  } catch (error) {
    return actionError(error);
  }
}
