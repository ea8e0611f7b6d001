/**
 * Turns the outbox (notification_event) into webhook and e-mail deliveries and
 * sends them, at least once: docs/notifications.md, "The outbox".
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Executor, Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { emailDeliveries } from "../../db/schema";
import type { CidrRange } from "../../env";
import { eventFacts, NOTIFICATION_EVENTS } from "./events";
import { composeMail, type MailConfig, mailRecipients } from "./mail";
import { postWebhook } from "./post";
import { webhookHeaders } from "./signature";

/** Attempts before a delivery is given up (status failed). */
export const MAX_ATTEMPTS = 8;
/** The first retry's delay; each next one doubles, capped at MAX_RETRY_DELAY_MS. */
export const FIRST_RETRY_DELAY_MS = 30_000;
const MAX_RETRY_DELAY_MS = 6 * 60 * 60 * 1000;
/**
 * How long a claimed delivery is left to the instance that sends it. It must
 * outlast the longest a send can take, or another instance claims it again
 * and the receiver gets it twice: a webhook POST has a time limit for the
 * whole exchange (NotifierConfig.timeoutMs, 10 s in a server); an e-mail is
 * bounded by the SMTP client's time limits (SMTP_TIMEOUTS, at most
 * smtpWorstCaseMs in all), which the e-mail lease is checked against
 * (lib/services/notifications/mail.test.ts).
 */
const WEBHOOK_SEND_LEASE_SECONDS = 60;
export const EMAIL_SEND_LEASE_SECONDS = 300;
const BATCH = 20;

export type NotifierConfig = {
  /** null: e-mail is off, and no e-mail deliveries are written. */
  mail: MailConfig | null;
  /** The base of links in e-mails, without a trailing slash. */
  publicUrl: string;
  /** The time limit of one webhook POST. */
  timeoutMs: number;
  /** The first retry's delay (tests shorten it). */
  firstRetryDelayMs: number;
  /** The private networks webhooks may reach (CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES); empty, none. */
  privateRanges: readonly CidrRange[];
};

/** The delay before attempt `attempts + 1`: doubling from the first, ±20% jitter. */
export function retryDelayMs(attempts: number, firstRetryDelayMs: number): number {
  const base = Math.min(firstRetryDelayMs * 2 ** Math.max(0, attempts - 1), MAX_RETRY_DELAY_MS);
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

const eventRow = z.object({
  id: z.string(),
  tenantId: z.string(),
  event: z.enum(NOTIFICATION_EVENTS),
  payload: z.record(z.string(), z.unknown()),
  /** The webhook deliveries the statement wrote for the whole batch (on every row). */
  webhooks: z.number(),
});
type EventRow = z.infer<typeof eventRow>;

/** What one fan-out took and wrote. */
export type FanOut = { taken: number; webhooks: number; emails: number };

/**
 * Takes up to BATCH undispatched events, writes their webhook deliveries and
 * marks them dispatched, in one statement: on its own it is atomic, so with
 * e-mail off a fan-out costs one round trip and one commit, where a
 * transaction cost six for one event (with e-mail on it still runs in one,
 * with the e-mail deliveries).
 */
function takeEvents(executor: Executor): Promise<EventRow[]> {
  return selectRows(
    executor,
    eventRow,
    sql`with taken as (
      select id, tenant_id, event, payload, created_at from notification_event
      where dispatched_at is null order by created_at limit ${BATCH} for update skip locked
    ), webhooks as (
      insert into webhook_delivery (tenant_id, endpoint_id, event_id)
      select t.tenant_id, e.id, t.id from taken t
      join webhook_endpoint e on e.tenant_id = t.tenant_id and e.disabled_at is null
        and e.events @> jsonb_build_array(t.event)
      on conflict do nothing
      returning 1
    ), dispatched as (
      update notification_event n set dispatched_at = now() from taken t where n.id = t.id
    )
    select t.id, t.tenant_id as "tenantId", t.event, t.payload,
      (select count(*) from webhooks)::int as webhooks
    from taken t order by t.created_at`,
  );
}

/** Fans out up to BATCH undispatched events to webhook and e-mail deliveries. */
export async function fanOutEvents(db: Database, config: NotifierConfig): Promise<FanOut> {
  if (!config.mail) {
    const events = await takeEvents(db);
    return { taken: events.length, webhooks: events[0]?.webhooks ?? 0, emails: 0 };
  }
  // The e-mails are written in the transaction that marks their events
  // dispatched, so an event is never marked without them.
  return db.transaction(async (tx) => {
    const events = await takeEvents(tx);
    let emails = 0;
    for (const event of events) emails += await mailOut(tx, event, config.publicUrl);
    return { taken: events.length, webhooks: events[0]?.webhooks ?? 0, emails };
  });
}

/** An event's e-mail deliveries, if it mails anyone; returns how many were written. */
async function mailOut(tx: Transaction, event: EventRow, publicUrl: string): Promise<number> {
  const { label, mail } = eventFacts(event.event);
  if (!mail) return 0;
  const recipients = await mailRecipients(tx, event.tenantId, mail.to, event.payload);
  if (recipients.length === 0) return 0;
  const { subject, body } = composeMail(label, mail, event.payload, publicUrl);
  const written = await tx
    .insert(emailDeliveries)
    .values(
      recipients.map((r) => ({
        tenantId: event.tenantId,
        eventId: event.id,
        userId: r.userId,
        toAddress: r.email,
        subject,
        body,
      })),
    )
    .onConflictDoNothing()
    .returning({ id: emailDeliveries.id });
  return written.length;
}

const webhookClaim = z.object({
  id: z.string(),
  attempts: z.number(),
  url: z.string(),
  secret: z.string(),
  disabled: z.boolean(),
  eventId: z.string(),
  event: z.enum(NOTIFICATION_EVENTS),
  payload: z.record(z.string(), z.unknown()),
  tenantId: z.string(),
  createdAt: z.string(),
});
type WebhookClaim = z.infer<typeof webhookClaim>;

/** The JSON a receiver gets: the event's id, name, time and payload. */
function webhookBody(
  claim: Pick<WebhookClaim, "eventId" | "event" | "payload" | "tenantId" | "createdAt">,
): string {
  return JSON.stringify({
    id: claim.eventId,
    event: claim.event,
    createdAt: claim.createdAt,
    tenantId: claim.tenantId,
    data: claim.payload,
  });
}

/** Sends up to BATCH due webhook deliveries; returns how many it tried. */
export async function sendDueWebhooks(db: Database, config: NotifierConfig): Promise<number> {
  const claims = await selectRows(
    db,
    webhookClaim,
    sql`with claimed as (
      update webhook_delivery d set attempts = d.attempts + 1,
        next_attempt_at = now() + make_interval(secs => ${WEBHOOK_SEND_LEASE_SECONDS})
      where d.id in (select id from webhook_delivery
        where status = 'pending' and next_attempt_at <= now()
        order by next_attempt_at limit ${BATCH} for update skip locked)
      returning d.id, d.attempts, d.endpoint_id, d.event_id
    )
    select claimed.id, claimed.attempts, e.url, e.secret, e.disabled_at is not null as disabled,
      ev.id as "eventId", ev.event, ev.payload,
      ev.tenant_id as "tenantId",
      to_char(ev.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt"
    from claimed
    join webhook_endpoint e on e.id = claimed.endpoint_id
    join notification_event ev on ev.id = claimed.event_id`,
  );
  await Promise.all(claims.map((claim) => sendWebhook(db, config, claim)));
  return claims.length;
}

async function sendWebhook(db: Database, config: NotifierConfig, claim: WebhookClaim) {
  if (claim.disabled) {
    await recordFailure(db, "webhook_delivery", claim.id, claim.attempts, config, {
      error: "The endpoint is disabled.",
      final: true,
    });
    return;
  }
  const body = webhookBody(claim);
  const timestamp = Math.floor(Date.now() / 1000);
  const outcome = await postWebhook({
    url: claim.url,
    body,
    privateRanges: config.privateRanges,
    timeoutMs: config.timeoutMs,
    headers: webhookHeaders(claim, timestamp, body),
  });
  if ("statusCode" in outcome && outcome.statusCode >= 200 && outcome.statusCode < 300) {
    await db.execute(sql`update webhook_delivery set status = 'delivered', delivered_at = now(),
      last_status_code = ${outcome.statusCode}, last_error = null where id = ${claim.id}::uuid`);
    return;
  }
  if ("refused" in outcome) {
    await recordFailure(db, "webhook_delivery", claim.id, claim.attempts, config, {
      error: outcome.refused,
    });
    return;
  }
  if (outcome.private) {
    // The operator let this endpoint into a private network; what that network
    // answered (a status, "connection refused") is not the tenant's to read.
    await recordFailure(db, "webhook_delivery", claim.id, claim.attempts, config, {
      error: "The private address did not accept the delivery (what it answered is not shown).",
    });
    return;
  }
  await recordFailure(db, "webhook_delivery", claim.id, claim.attempts, config, {
    statusCode: "statusCode" in outcome ? outcome.statusCode : null,
    error:
      "statusCode" in outcome
        ? `The receiver answered HTTP ${outcome.statusCode}${outcome.statusCode >= 300 && outcome.statusCode < 400 ? " (redirects are not followed)" : ""}.`
        : outcome.error,
  });
}

/** A failed attempt: retried after the back-off, or given up after MAX_ATTEMPTS. */
async function recordFailure(
  db: Database,
  table: "webhook_delivery" | "email_delivery",
  id: string,
  attempts: number,
  config: NotifierConfig,
  failure: { error: string; statusCode?: number | null; final?: boolean },
) {
  const final = failure.final === true || attempts >= MAX_ATTEMPTS;
  const delayMs = retryDelayMs(attempts, config.firstRetryDelayMs);
  const code =
    table === "webhook_delivery" ? sql`, last_status_code = ${failure.statusCode ?? null}` : sql``;
  await db.execute(sql`update ${sql.identifier(table)} set
    status = ${final ? "failed" : "pending"}::delivery_status,
    next_attempt_at = now() + make_interval(secs => ${delayMs / 1000}),
    last_error = ${failure.error.slice(0, 1000)}${code}
    where id = ${id}::uuid`);
}

const emailClaim = z.object({
  id: z.string(),
  attempts: z.number(),
  toAddress: z.string(),
  subject: z.string(),
  body: z.string(),
  optedOut: z.boolean(),
});

/** Sends up to BATCH due e-mails; none while e-mail is off. */
export async function sendDueEmails(db: Database, config: NotifierConfig): Promise<number> {
  const mail = config.mail;
  if (!mail) return 0;
  const claims = await selectRows(
    db,
    emailClaim,
    sql`with claimed as (
      update email_delivery d set attempts = d.attempts + 1,
        next_attempt_at = now() + make_interval(secs => ${EMAIL_SEND_LEASE_SECONDS})
      where d.id in (select id from email_delivery
        where status = 'pending' and next_attempt_at <= now()
        order by next_attempt_at limit ${BATCH} for update skip locked)
      returning d.id, d.attempts, d.to_address, d.subject, d.body, d.user_id
    )
    select claimed.id, claimed.attempts, claimed.to_address as "toAddress", claimed.subject,
      claimed.body,
      -- user_id is set null when the person is deleted: nobody to write to any more.
      (u.id is null or u.email_notifications = false or u.disabled_at is not null) as "optedOut"
    from claimed left join app_user u on u.id = claimed.user_id`,
  );
  await Promise.all(
    claims.map(async (claim) => {
      if (claim.optedOut) {
        await recordFailure(db, "email_delivery", claim.id, claim.attempts, config, {
          error:
            "The person turned review e-mails off, was disabled or was deleted before it was sent.",
          final: true,
        });
        return;
      }
      try {
        await mail.transport.sendMail({
          from: mail.from,
          to: claim.toAddress,
          subject: claim.subject,
          text: claim.body,
        });
        await db.execute(sql`update email_delivery set status = 'delivered', sent_at = now(),
          last_error = null where id = ${claim.id}::uuid`);
      } catch (error) {
        await recordFailure(db, "email_delivery", claim.id, claim.attempts, config, {
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }),
  );
  return claims.length;
}

/**
 * What a pass sends: a batch of each kind that is due ("all": the timer's
 * pass, a resend), or a batch only of a kind its own fan-out wrote ("fan-out",
 * the pass right after a call that queued an event); a batch is the oldest
 * due, so a busy outbox may leave a new delivery to the next pass. Retries
 * are the timer's: a pass after every completed plan would otherwise add a
 * claim of due deliveries (one per kind with e-mail on) that almost always
 * finds none.
 */
export type PassScope = "all" | "fan-out";

/** One pass: every undispatched event fanned out, then one batch of each kind sent. */
export async function runNotificationPass(
  db: Database,
  config: NotifierConfig,
  scope: PassScope = "all",
): Promise<void> {
  // A full batch may have left more behind; an empty or partial one did not.
  const wrote = { webhooks: 0, emails: 0 };
  let taken: number;
  do {
    const fanOut = await fanOutEvents(db, config);
    taken = fanOut.taken;
    wrote.webhooks += fanOut.webhooks;
    wrote.emails += fanOut.emails;
  } while (taken === BATCH);
  await Promise.all([
    scope === "all" || wrote.webhooks > 0 ? sendDueWebhooks(db, config) : undefined,
    scope === "all" || wrote.emails > 0 ? sendDueEmails(db, config) : undefined,
  ]);
}
