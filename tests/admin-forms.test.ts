/**
 * What an admin form's tampered fields get, on PGlite and PostgreSQL 15: an id
 * that is not one is a validation message naming the field, checked before any
 * query; and a query that fails all the same leaves its statement and values
 * (a webhook secret, a token hash) out of the log (lib/log.ts).
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { webhookEndpoints } from "@/lib/db/schema";
import { revokeConnectedApp } from "@/lib/services/accounts/connected-apps";
import { createUser } from "@/lib/services/accounts/create-user";
import { revokeApiKey } from "@/lib/services/accounts/revoke-api-key";
import { setUserDisabled } from "@/lib/services/accounts/set-user-disabled";
import { setUserRole } from "@/lib/services/accounts/set-user-role";
import {
  deleteWebhookEndpoint,
  resendWebhookDelivery,
  setWebhookEndpointDisabled,
} from "@/lib/services/notifications/webhooks";
import type { ServiceContext } from "@/lib/services/shared/context";
import { actionError } from "@/lib/web/action-state";
import { BACKENDS, freshDatabase } from "./support/databases";

describe.each(BACKENDS)("admin forms' fields (%s)", (backend) => {
  let handle: DatabaseHandle;
  let ctx: ServiceContext;

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    const admin = await createUser(handle.db, {
      email: "ada@example.com",
      password: "a long enough password",
      role: "admin",
      tenant: "Acme",
    });
    ctx = {
      db: handle.db,
      tenantId: admin.tenantId,
      actor: { type: "user", id: admin.userId, label: "ada@example.com" },
      stallThresholdSeconds: 1800,
    };
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("answers an id that is not one with a validation message naming the field", async () => {
    const bad = "1' or '1'='1";
    const cases: [() => Promise<unknown>, RegExp][] = [
      [() => revokeApiKey(ctx, { apiKeyId: bad }), /^apiKeyId: must be an API key id/],
      [() => revokeConnectedApp(ctx, { grantId: bad }), /^grantId: must be a connected app id/],
      [
        () => resendWebhookDelivery(ctx, { deliveryId: bad }),
        /^deliveryId: must be a webhook delivery id/,
      ],
      [
        () => setWebhookEndpointDisabled(ctx, { endpointId: bad, disabled: true }),
        /^endpointId: must be a webhook endpoint id/,
      ],
      [() => deleteWebhookEndpoint(ctx, { endpointId: bad }), /^endpointId: must be a webhook/],
      [() => setUserDisabled(ctx, { userId: bad, disabled: true }), /^userId: must be a user id/],
      [() => setUserRole(ctx, { userId: bad, role: "admin" }), /^userId: must be a user id/],
    ];
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const [call, message] of cases) {
        const error = await call().then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error, String(message)).toMatchObject({ code: "VALIDATION_ERROR" });
        const state = actionError(error);
        expect(state).toMatchObject({ status: "error" });
        expect(state.status === "error" ? state.message : "").toMatch(message);
      }
      expect(log).not.toHaveBeenCalled();
    } finally {
      log.mockRestore();
    }
  });

  it("logs a failed query without its statement or values", async () => {
    const failure = await handle.db
      .update(webhookEndpoints)
      .set({ secret: "whsec_must-not-be-logged" })
      .where(eq(webhookEndpoints.id, "not-a-uuid"))
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(failure).toBeInstanceOf(Error);
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      expect(actionError(failure)).toMatchObject({
        status: "error",
        message: "Something went wrong and nothing was changed. Reload the page and try again.",
      });
      const logged = log.mock.calls.flat().map(String).join("\n");
      expect(logged).toContain("a database query failed (22P02)");
      expect(logged).not.toContain("whsec_must-not-be-logged");
      expect(logged).not.toContain("not-a-uuid");
      expect(logged).not.toContain("webhook_endpoint");
    } finally {
      log.mockRestore();
    }
  });
});
