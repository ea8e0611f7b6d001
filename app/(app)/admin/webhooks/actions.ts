"use server";

import { z } from "zod";
import { AppError } from "@/lib/plan-engine/app-error";
import {
  createWebhookEndpoint,
  createWebhookEndpointInput,
  deleteWebhookEndpoint,
  resendWebhookDelivery,
  resendWebhookDeliveryInput,
  setWebhookEndpointDisabled,
} from "@/lib/services/notifications/webhooks";
import { serverAction } from "@/lib/web/server-action";

const WEBHOOKS_PAGE = () => "/admin/webhooks";

/** The signing secret is returned once, to be shown once. */
export const registerWebhookAction = serverAction({
  access: "admin",
  input: createWebhookEndpointInput,
  run: ({ ctx, input }) => createWebhookEndpoint(ctx, input),
  success: (created) => ({
    status: "success",
    message: `Registered ${created.url}. Copy the signing secret now: it is shown only once.`,
    data: { secret: created.secret },
  }),
  revalidate: WEBHOOKS_PAGE,
});

/** An endpoint's buttons: `op` is "<disable|enable|delete>:<endpointId>". */
export const manageWebhookAction = serverAction({
  access: "admin",
  input: z.object({ op: z.string() }),
  async run({ ctx, input }) {
    const [what = "", endpointId = ""] = input.op.split(":");
    if (what === "disable" || what === "enable") {
      await setWebhookEndpointDisabled(ctx, { endpointId, disabled: what === "disable" });
      return what === "disable" ? "Endpoint disabled." : "Endpoint enabled.";
    }
    if (what === "delete") {
      await deleteWebhookEndpoint(ctx, { endpointId });
      return "Endpoint deleted, with its deliveries.";
    }
    throw new AppError("VALIDATION_ERROR", "Unknown action.");
  },
  success: (message) => message,
  revalidate: WEBHOOKS_PAGE,
});

export const resendDeliveryAction = serverAction({
  access: "admin",
  input: resendWebhookDeliveryInput,
  run: ({ ctx, input }) => resendWebhookDelivery(ctx, input),
  success: () => "Queued to be sent again now.",
  revalidate: WEBHOOKS_PAGE,
});
