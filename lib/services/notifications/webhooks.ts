/**
 * The admin's webhooks (docs/notifications.md): register an endpoint (its URL
 * checked against private addresses, its signing secret returned once),
 * disable, enable or delete it, resend a delivery; plus the page's read model.
 * Whether private networks are reachable is the operator's setting
 * (CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES), not a tenant's. The caller checks the admin
 * role (app/(app)/admin/webhooks/actions.ts); every query is scoped to the tenant.
 */
import "server-only";
import { and, desc, eq } from "drizzle-orm";
import { z } from "zod";
import { sameTenant } from "../../db/same-tenant";
import { notificationEvents, webhookDeliveries, webhookEndpoints } from "../../db/schema";
import { env } from "../../env";
import { AppError } from "../../plan-engine/app-error";
import type { ServiceContext } from "../shared/context";
import { recordIdField } from "../shared/fields";
import { parseInput } from "../shared/validation";
import { checkWebhookUrl } from "./address";
import { isNotificationEvent, type NotificationEvent } from "./events";
import { smtpHost } from "./mail";
import { kickNotifier } from "./runtime";
import { newWebhookSecret } from "./signature";

const MAX_DESCRIPTION = 200;
const RECENT_DELIVERIES = 50;

/** The register form's fields: the events are its checkboxes, none ticked is an empty list. */
export const createWebhookEndpointInput = z.object({
  url: z.string(),
  events: z.array(z.string()).default([]),
  description: z.string().optional(),
});

/** Registers an endpoint; the secret in the answer is never shown again. */
export async function createWebhookEndpoint(
  ctx: ServiceContext,
  raw: z.input<typeof createWebhookEndpointInput>,
): Promise<{ endpointId: string; url: string; secret: string }> {
  const input = parseInput(createWebhookEndpointInput, raw);
  const events = [...new Set(input.events)].filter(isNotificationEvent);
  if (events.length === 0 || events.length !== new Set(input.events).size) {
    throw new AppError("VALIDATION_ERROR", "Pick at least one event from the list.");
  }
  const description = input.description?.trim() || null;
  if (description && description.length > MAX_DESCRIPTION) {
    throw new AppError(
      "VALIDATION_ERROR",
      `The description is longer than ${MAX_DESCRIPTION} characters.`,
    );
  }
  const url = await checkWebhookUrl(input.url, env().CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES);
  const secret = newWebhookSecret();
  const [row] = await ctx.db
    .insert(webhookEndpoints)
    .values({ tenantId: ctx.tenantId, url: url.href, description, events, secret })
    .returning({ id: webhookEndpoints.id });
  if (!row) throw new AppError("INTERNAL_ERROR", "The endpoint was not stored.");
  return { endpointId: row.id, url: url.href, secret };
}

const endpointIdField = recordIdField("a webhook endpoint");

/** Disabled endpoints get no new deliveries; their pending ones fail. */
export async function setWebhookEndpointDisabled(
  ctx: ServiceContext,
  raw: { endpointId: string; disabled: boolean },
): Promise<void> {
  const input = parseInput(z.object({ endpointId: endpointIdField, disabled: z.boolean() }), raw);
  const updated = await ctx.db
    .update(webhookEndpoints)
    .set({ disabledAt: input.disabled ? new Date() : null })
    .where(
      and(
        eq(webhookEndpoints.id, input.endpointId),
        sameTenant(webhookEndpoints.tenantId, ctx.tenantId),
      ),
    )
    .returning({ id: webhookEndpoints.id });
  if (updated.length === 0) throw new AppError("NOT_FOUND", "No such webhook endpoint.");
}

/** Deletes the endpoint and its deliveries. */
export async function deleteWebhookEndpoint(ctx: ServiceContext, raw: { endpointId: string }) {
  const input = parseInput(z.object({ endpointId: endpointIdField }), raw);
  const deleted = await ctx.db
    .delete(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.id, input.endpointId),
        sameTenant(webhookEndpoints.tenantId, ctx.tenantId),
      ),
    )
    .returning({ id: webhookEndpoints.id });
  if (deleted.length === 0) throw new AppError("NOT_FOUND", "No such webhook endpoint.");
}

/**
 * Sends a delivery again, now, with a fresh run of attempts and the same
 * Cairn-Delivery id (a receiver that de-duplicates by it ignores the copy).
 */
export const resendWebhookDeliveryInput = z.object({
  deliveryId: recordIdField("a webhook delivery"),
});

export async function resendWebhookDelivery(
  ctx: ServiceContext,
  raw: z.input<typeof resendWebhookDeliveryInput>,
) {
  const { deliveryId } = parseInput(resendWebhookDeliveryInput, raw);
  const [delivery] = await ctx.db
    .select({ disabledAt: webhookEndpoints.disabledAt })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(
      and(
        eq(webhookDeliveries.id, deliveryId),
        sameTenant(webhookDeliveries.tenantId, ctx.tenantId),
      ),
    );
  if (!delivery) throw new AppError("NOT_FOUND", "No such delivery.");
  if (delivery.disabledAt) {
    throw new AppError("VALIDATION_ERROR", "The endpoint is disabled: enable it to resend.");
  }
  await ctx.db
    .update(webhookDeliveries)
    .set({ status: "pending", attempts: 0, nextAttemptAt: new Date(), deliveredAt: null })
    .where(
      and(
        eq(webhookDeliveries.id, deliveryId),
        sameTenant(webhookDeliveries.tenantId, ctx.tenantId),
      ),
    );
  kickNotifier();
}

export type WebhooksView = {
  /** Whether the operator lets webhooks reach some private networks (and http://). */
  privateAllowed: boolean;
  /** null: e-mail is off; else the SMTP host it goes through. */
  emailVia: string | null;
  endpoints: {
    id: string;
    url: string;
    description: string | null;
    events: NotificationEvent[];
    createdAt: Date;
    disabled: boolean;
  }[];
  deliveries: {
    id: string;
    endpointUrl: string;
    event: string;
    status: "pending" | "delivered" | "failed";
    attempts: number;
    lastStatusCode: number | null;
    lastError: string | null;
    createdAt: Date;
    deliveredAt: Date | null;
    nextAttemptAt: Date;
  }[];
};

/** The webhooks page: the endpoints, the newest deliveries, and how e-mail and private networks are set. */
export async function webhooksView(ctx: ServiceContext): Promise<WebhooksView> {
  const config = env();
  const [endpoints, deliveries] = await Promise.all([
    ctx.db
      .select({
        id: webhookEndpoints.id,
        url: webhookEndpoints.url,
        description: webhookEndpoints.description,
        events: webhookEndpoints.events,
        createdAt: webhookEndpoints.createdAt,
        disabledAt: webhookEndpoints.disabledAt,
      })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.tenantId, ctx.tenantId))
      .orderBy(desc(webhookEndpoints.createdAt)),
    ctx.db
      .select({
        id: webhookDeliveries.id,
        endpointUrl: webhookEndpoints.url,
        event: notificationEvents.event,
        status: webhookDeliveries.status,
        attempts: webhookDeliveries.attempts,
        lastStatusCode: webhookDeliveries.lastStatusCode,
        lastError: webhookDeliveries.lastError,
        createdAt: webhookDeliveries.createdAt,
        deliveredAt: webhookDeliveries.deliveredAt,
        nextAttemptAt: webhookDeliveries.nextAttemptAt,
      })
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .innerJoin(notificationEvents, eq(notificationEvents.id, webhookDeliveries.eventId))
      .where(eq(webhookDeliveries.tenantId, ctx.tenantId))
      .orderBy(desc(webhookDeliveries.createdAt))
      .limit(RECENT_DELIVERIES),
  ]);
  return {
    privateAllowed: config.CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES.length > 0,
    emailVia:
      config.CAIRN_SMTP_URL && config.CAIRN_MAIL_FROM ? smtpHost(config.CAIRN_SMTP_URL) : null,
    endpoints: endpoints.map(({ disabledAt, events, ...endpoint }) => ({
      ...endpoint,
      // Written only through createWebhookEndpoint, which takes only known names.
      events: events.filter(isNotificationEvent),
      disabled: disabledAt !== null,
    })),
    deliveries,
  };
}
