/**
 * The dispatcher in a running server: a pass every CAIRN_NOTIFY_INTERVAL_MS in
 * every instance (unref'd, so it never keeps a process alive), and one more
 * right after a call that queued a notification, so events do not wait for
 * the timer; that one sends due deliveries only of a kind its own fan-out
 * wrote (PassScope). Passes never overlap in a process; a kick during a pass
 * runs one more after it, of the wider scope asked. Errors are logged, never
 * thrown: a notification failure must not fail or delay anything else.
 *
 * The state lives on globalThis because Next.js may load this module more than
 * once (instrumentation and route bundles), and all must share one notifier.
 */
import "server-only";
import type { Database } from "../../db/client";
import { env } from "../../env";
import { logWarning } from "../../log";
import { publicBaseUrl } from "../shared/public-url";
import { type NotifierConfig, type PassScope, runNotificationPass } from "./dispatcher";
import { mailConfig } from "./mail";
import { notificationsQueued } from "./queued";

type NotifierState = {
  db: Database;
  config: NotifierConfig;
  running: boolean;
  /** The pass asked for while one runs: it runs right after. */
  next: PassScope | null;
  timer: NodeJS.Timeout;
};

const globalForNotifier = globalThis as typeof globalThis & {
  __cairnNotifier?: NotifierState;
};

/** The configuration the server runs with, from the environment. */
export function notifierConfigFromEnv(): NotifierConfig {
  const config = env();
  return {
    mail: mailConfig(config.CAIRN_SMTP_URL, config.CAIRN_MAIL_FROM),
    publicUrl: publicBaseUrl(),
    timeoutMs: 10_000,
    firstRetryDelayMs: 30_000,
    privateRanges: config.CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES,
  };
}

export function startNotifier(db: Database): void {
  if (globalForNotifier.__cairnNotifier) return;
  const timer = setInterval(() => kickNotifier(), env().CAIRN_NOTIFY_INTERVAL_MS);
  timer.unref();
  globalForNotifier.__cairnNotifier = {
    db,
    config: notifierConfigFromEnv(),
    running: false,
    next: null,
    timer,
  };
  kickNotifier();
}

/** Runs a pass now (or right after the one running); a no-op where no notifier runs. */
export function kickNotifier(scope: PassScope = "all"): void {
  const state = globalForNotifier.__cairnNotifier;
  if (!state) return;
  if (state.running) {
    state.next = state.next === "all" || scope === "all" ? "all" : "fan-out";
    return;
  }
  state.running = true;
  void (async () => {
    for (let pass: PassScope | null = scope; pass !== null; pass = state.next) {
      state.next = null;
      try {
        await runNotificationPass(state.db, state.config, pass);
      } catch (error) {
        logWarning("Cairn: a notification pass failed; the next one retries", error);
      }
    }
    state.running = false;
  })();
}

/** After a call: kicks the dispatcher if something was queued while it ran. */
export function kickIfQueuedSince(before: number): void {
  if (notificationsQueued() !== before) kickNotifier("fan-out");
}
