/**
 * A process-wide count of notifications written inside transactions. A door
 * reads it before a call and kicks the dispatcher after the call if it moved
 * (lib/services/notifications/runtime.ts, `kickIfQueuedSince`): by then the
 * call's transaction has committed, so the pass finds its event. Another
 * call's count only causes a pass that may find nothing.
 */
const globalForQueued = globalThis as typeof globalThis & { __cairnNotificationsQueued?: number };

export function noteNotificationQueued(): void {
  globalForQueued.__cairnNotificationsQueued =
    (globalForQueued.__cairnNotificationsQueued ?? 0) + 1;
}

export function notificationsQueued(): number {
  return globalForQueued.__cairnNotificationsQueued ?? 0;
}
