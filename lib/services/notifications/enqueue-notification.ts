/**
 * Queues a notification in the transaction of the change that caused it (the
 * outbox, docs/notifications.md): one insert, no network. The dispatcher later fans
 * the event out to webhook and e-mail deliveries, so a crash after commit loses
 * no event, a rolled-back change sends none, and a slow receiver never delays
 * the tool call.
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
