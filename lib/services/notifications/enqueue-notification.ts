/**
 * The outbox's one insert, in the transaction of the change that caused it
 * (docs/notifications.md, "The outbox"); use cases queue through `queueEvent`.
 */
import "server-only";
import type { Executor } from "../../db/client";
import { notificationEvents } from "../../db/schema";
import type { NotificationEvent } from "./events";
import { noteNotificationQueued } from "./queued";

export async function enqueueNotification(
  tx: Executor,
  tenantId: string,
  event: NotificationEvent,
  payload: Record<string, unknown>,
): Promise<void> {
  await tx.insert(notificationEvents).values({ tenantId, event, payload });
  noteNotificationQueued();
}
