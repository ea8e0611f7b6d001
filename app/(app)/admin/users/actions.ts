"use server";

import { z } from "zod";
import { AppError } from "@/lib/plan-engine/app-error";
import {
  revokeConnectedApp,
  revokeConnectedAppInput,
} from "@/lib/services/accounts/connected-apps";
import { createApiKeyInput, createTenantApiKey } from "@/lib/services/accounts/create-api-key";
import {
  createTenantUser,
  createTenantUserInput,
} from "@/lib/services/accounts/create-tenant-user";
import { deleteTenantUser } from "@/lib/services/accounts/delete-tenant-user";
import { revokeApiKey, revokeApiKeyInput } from "@/lib/services/accounts/revoke-api-key";
import { setUserDisabled } from "@/lib/services/accounts/set-user-disabled";
import { setUserRole } from "@/lib/services/accounts/set-user-role";
import { serverAction } from "@/lib/web/server-action";

const USERS_PAGE = () => "/admin/users";

export const createUserAction = serverAction({
  access: "admin",
  input: createTenantUserInput,
  run: ({ ctx, input }) => createTenantUser(ctx, input),
  success: (_, input) => `Created ${input.role} ${input.email}.`,
  revalidate: USERS_PAGE,
});

/** The key is returned once, to be shown once; only its hash is stored. */
export const createKeyAction = serverAction({
  access: "admin",
  input: createApiKeyInput,
  run: ({ ctx, input }) => createTenantApiKey(ctx, input),
  success: (created) => ({
    status: "success",
    message: `Created key "${created.name}". Copy it now: it is shown only once.`,
    data: { key: created.key, name: created.name },
  }),
  revalidate: USERS_PAGE,
});

/** Revokes a connected app (an OAuth grant) of the team: its tokens stop at once. */
export const revokeAppAction = serverAction({
  access: "admin",
  input: revokeConnectedAppInput,
  run: ({ ctx, input }) => revokeConnectedApp(ctx, input),
  success: () => "App revoked: its tokens no longer work.",
  revalidate: USERS_PAGE,
});

export const revokeKeyAction = serverAction({
  access: "admin",
  input: revokeApiKeyInput,
  run: ({ ctx, input }) => revokeApiKey(ctx, input),
  success: () => "Key revoked: it no longer works.",
  revalidate: USERS_PAGE,
});

/**
 * The users table's buttons (one form): `op` is "<what>:<userId>", what being
 * make-admin, make-researcher, disable, enable or delete. Disabling ends the
 * user's sessions and stops their API keys at once; a role change applies from
 * their next request; deleting removes them and their keys, and the audit trail
 * keeps their name.
 */
export const manageUserAction = serverAction({
  access: "admin",
  input: z.object({ op: z.string() }),
  async run({ ctx, input }) {
    const [what = "", userId = ""] = input.op.split(":");
    if (what === "make-admin" || what === "make-researcher") {
      const role = what === "make-admin" ? "admin" : "researcher";
      const { email } = await setUserRole(ctx, { userId, role });
      return `${email} is now ${role === "admin" ? "an admin" : "a researcher"}.`;
    }
    if (what === "disable" || what === "enable") {
      const { email } = await setUserDisabled(ctx, { userId, disabled: what === "disable" });
      return what === "disable"
        ? `${email} is disabled: signed out everywhere, their connected apps revoked, and their API keys no longer work.`
        : `${email} is enabled: they can sign in again and their API keys work again; revoked connected apps stay revoked.`;
    }
    if (what === "delete") {
      const { email } = await deleteTenantUser(ctx, { userId });
      return `Deleted ${email} and their API keys. The audit trail keeps their name.`;
    }
    throw new AppError("VALIDATION_ERROR", "Unknown action: reload the page and try again.");
  },
  success: (message) => message,
  revalidate: USERS_PAGE,
});
