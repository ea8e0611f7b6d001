/**
 * E-mails: who receives them, what they say (the events' facts, events.ts), and
 * the SMTP transport. On only when CAIRN_SMTP_URL and CAIRN_MAIL_FROM are both set.
 */
import "server-only";
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import nodemailer from "nodemailer";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { sameTenant } from "../../db/same-tenant";
import { reviewRequests, type USER_ROLES, users } from "../../db/schema";
import type { EventPayload, MailFacts, MailRecipients } from "./events";

export type MailConfig = {
  transport: nodemailer.Transporter;
  from: string;
  /** The SMTP host, for the admin page's status line. */
  host: string;
};

/**
 * The SMTP client's time limits, in milliseconds. nodemailer's defaults (two
 * minutes to connect, ten of silence) would let a slow mail server hold one
 * e-mail past its send lease, after which another instance sends it again.
 */
export const SMTP_TIMEOUTS = {
  dnsTimeout: 10_000,
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  socketTimeout: 20_000,
} as const;

/**
 * The longest one e-mail can take: resolving, connecting and the greeting,
 * then the socket's silence limit for each command of the exchange (EHLO,
 * STARTTLS and EHLO again, AUTH, MAIL FROM, RCPT TO, DATA, the message, QUIT).
 */
export function smtpWorstCaseMs(timeouts: typeof SMTP_TIMEOUTS = SMTP_TIMEOUTS): number {
  const commands = 9;
  return (
    timeouts.dnsTimeout +
    timeouts.connectionTimeout +
    timeouts.greetingTimeout +
    commands * timeouts.socketTimeout
  );
}

/** A transport from CAIRN_SMTP_URL and CAIRN_MAIL_FROM, or null when either is unset. */
export function mailConfig(
  smtpUrl: string | undefined,
  from: string | undefined,
): MailConfig | null {
  if (!smtpUrl || !from) return null;
  return {
    transport: nodemailer.createTransport(withTimeouts(smtpUrl)),
    from,
    host: smtpHost(smtpUrl),
  };
}

/**
 * The SMTP URL with SMTP_TIMEOUTS as query options: nodemailer takes a URL's
 * options and ignores any given beside it, and these override the URL's own.
 */
function withTimeouts(smtpUrl: string): string {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    // nodemailer reports the unusable URL at the first send, in the delivery log.
    return smtpUrl;
  }
  for (const [name, value] of Object.entries(SMTP_TIMEOUTS)) {
    url.searchParams.set(name, String(value));
  }
  return url.toString();
}

export function smtpHost(smtpUrl: string): string {
  try {
    return new URL(smtpUrl).host;
  } catch {
    return "the configured SMTP server";
  }
}

type Recipient = { userId: string; email: string };
type Role = (typeof USER_ROLES)[number];

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

/** The people an e-mailed event goes to (its facts' `mail.to`), of those enabled with e-mails on. */
export async function mailRecipients(
  tx: Executor,
  tenantId: string,
  to: MailRecipients,
  payload: EventPayload,
): Promise<Recipient[]> {
  const who =
    to === "reviewers"
      ? await reviewers(tx, tenantId, payload)
      : to === "snoozer"
        ? snoozer(payload)
        : planOwner(payload);
  if (who === null) return [];
  return tx
    .select({ userId: users.id, email: users.email })
    .from(users)
    .where(
      and(
        eq(users.tenantId, tenantId),
        isNull(users.disabledAt),
        eq(users.emailNotifications, true),
        who,
      ),
    );
}

const userIdList = z.array(z.uuid()).min(1);

/**
 * The review's assignee when there is one, else the people of an escalation
 * level, else the users of the assigned role, else the whole team (undefined:
 * no condition). The payload names the assignment; a payload without it is
 * completed from the review row.
 */
async function reviewers(tx: Executor, tenantId: string, payload: EventPayload) {
  let assignedUserId = text(payload.assignedUserId);
  let assignedUserIds = userIdList.safeParse(payload.assignedUserIds).data;
  let assignedRole = text(payload.assignedRole) as Role | undefined;
  const reviewId = text(payload.reviewRequestId);
  if (!("assignedUserId" in payload) && !("assignedRole" in payload) && reviewId) {
    const [review] = await tx
      .select({
        userId: reviewRequests.assignedUserId,
        userIds: reviewRequests.assignedUserIds,
        role: reviewRequests.assignedRole,
      })
      .from(reviewRequests)
      .where(and(eq(reviewRequests.id, reviewId), sameTenant(reviewRequests.tenantId, tenantId)));
    assignedUserId = review?.userId ?? undefined;
    assignedUserIds = userIdList.safeParse(review?.userIds).data;
    assignedRole = review?.role ?? undefined;
  }
  if (assignedUserId) return eq(users.id, assignedUserId);
  if (assignedUserIds) return inArray(users.id, assignedUserIds);
  return assignedRole ? eq(users.role, assignedRole) : undefined;
}

/** The reviewer whose snooze ended (`snoozedUserId`), whoever the review is assigned to. */
function snoozer(payload: EventPayload) {
  const userId = z.uuid().safeParse(payload.snoozedUserId);
  return userId.success ? eq(users.id, userId.data) : null;
}

/**
 * The person who started the plan: the signed-in user, or the owner of the
 * API key it was created with (null: nobody is known, so nobody is e-mailed).
 */
function planOwner(payload: EventPayload) {
  const planId = z.uuid().safeParse(payload.planId);
  if (!planId.success) return null;
  return sql`${users.id} = (select coalesce(p.created_by_user_id, k.user_id)
    from research_plan p left join api_key k on k.id = p.created_by_key_id
    where p.id = ${planId.data}::uuid)`;
}

/** Each kind of recipient: who they are (docs/notifications.md's table), why they get the e-mail, its link. */
export const MAIL_RECIPIENTS: Record<
  MailRecipients,
  { who: string; because: string; link: string }
> = {
  reviewers: {
    who: "the reviewers",
    because: "you review for your Cairn team",
    link: "Open the review",
  },
  snoozer: {
    who: "the reviewer who snoozed it",
    because: "you snoozed this review",
    link: "Open the review",
  },
  "plan-owner": {
    who: "whoever started the plan",
    because: "you started this research plan",
    link: "Open the plan",
  },
};

/** The e-mail's subject and plain-text body, with a link to the plan. */
export function composeMail(
  label: string,
  mail: MailFacts,
  payload: EventPayload,
  publicUrl: string,
): { subject: string; body: string } {
  const title = text(payload.planTitle) ?? "a research plan";
  const planId = text(payload.planId);
  const { because, link } = MAIL_RECIPIENTS[mail.to];
  const lines = [`${label}: ${title}.`, "", ...mail.details(payload)];
  if (planId) lines.push(`${link}: ${publicUrl}/plans/${planId}`);
  lines.push(
    "",
    `You receive this because ${because}; turn these e-mails off on your account page.`,
  );
  return { subject: `[Cairn] ${label}: ${title}`, body: lines.join("\n") };
}
