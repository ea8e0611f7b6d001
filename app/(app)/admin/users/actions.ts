"use server";

import { revalidatePath } from "next/cache";
import { requireAdmin, userContext } from "@/lib/auth/session";
import { USER_ROLES } from "@/lib/db/schema";
import { createApiKey, createTenantUser, revokeApiKey } from "@/lib/services/accounts";
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
