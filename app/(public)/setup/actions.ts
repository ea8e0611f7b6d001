"use server";

import { signIn } from "@/lib/auth/config";
import { type ActionState, actionError, field } from "@/lib/web/action-state";
import { setUpFirstAdmin } from "@/lib/web/first-run";

export async function createFirstAdminAction(
  _state: ActionState,
  form: FormData,
): Promise<ActionState> {
  const email = field(form, "email") ?? "";
  const password = field(form, "password") ?? "";
  try {
    await setUpFirstAdmin({
      setupCode: field(form, "setupCode") ?? "",
      email,
      password,
      name: field(form, "name") || undefined,
      tenant: field(form, "tenant") ?? "",
    });
  } catch (error) {
    return actionError(error);
  }
  await signIn("credentials", { email, password, redirectTo: "/admin/users?welcome=1" });
  return { status: "idle" };
}
