"use server";

import { revalidatePath } from "next/cache";
import { requireAdmin, userContext } from "@/lib/auth/session";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  resendWebhookDelivery,
  setAllowPrivateWebhooks,
  setWebhookEndpointDisabled,
} from "@/lib/services/notifications/webhooks";
import { type ActionState, actionError, field } from "@/lib/web/action-state";

/** The signing secret is returned once, to be shown once. */
export async function registerWebhookAction(
  _state: ActionState,
  form: FormData,
): Promise<ActionState> {
  const admin = await requireAdmin();
  try {
    const created = await createWebhookEndpoint(await userContext(admin), {
      url: field(form, "url") ?? "",
      events: form.getAll("events").filter((value) => typeof value === "string"),
      description: field(form, "description"),
    });
    revalidatePath("/admin/webhooks");
    return {
      status: "success",
      message: `Registered ${created.url}. Copy the signing secret now: it is shown only once.`,
      data: { secret: created.secret },
    };
  } catch (error) {
    return actionError(error);
  }
}

/** An endpoint's buttons: `op` is "<disable|enable|delete>:<endpointId>". */
export async function manageWebhookAction(
  _state: ActionState,
  form: FormData,
): Promise<ActionState> {
  const admin = await requireAdmin();
  const [what = "", endpointId = ""] = (field(form, "op") ?? "").split(":");
  try {
    const ctx = await userContext(admin);
    let message: string;
    if (what === "disable" || what === "enable") {
      await setWebhookEndpointDisabled(ctx, endpointId, what === "disable");
      message = what === "disable" ? "Endpoint disabled." : "Endpoint enabled.";
    } else if (what === "delete") {
      await deleteWebhookEndpoint(ctx, endpointId);
      message = "Endpoint deleted, with its deliveries.";
    } else {
      return { status: "error", message: "Unknown action." };
    }
    revalidatePath("/admin/webhooks");
    return { status: "success", message };
  } catch (error) {
    return actionError(error);
  }
}

export async function resendDeliveryAction(
  _state: ActionState,
  form: FormData,
): Promise<ActionState> {
  const admin = await requireAdmin();
  try {
    await resendWebhookDelivery(await userContext(admin), field(form, "deliveryId") ?? "");
  } catch (error) {
    return actionError(error);
  }
  revalidatePath("/admin/webhooks");
  return { status: "success", message: "Queued to be sent again now." };
}

export async function allowPrivateWebhooksAction(
  _state: ActionState,
  form: FormData,
): Promise<ActionState> {
  const admin = await requireAdmin();
  const allowed = field(form, "allow") === "yes";
  try {
    await setAllowPrivateWebhooks(await userContext(admin), allowed);
  } catch (error) {
    return actionError(error);
  }
  revalidatePath("/admin/webhooks");
  return {
    status: "success",
    message: allowed
      ? "Webhooks may now reach loopback and private addresses, and use http://."
      : "Webhooks to loopback and private addresses are refused again.",
  };
}
