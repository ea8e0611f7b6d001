/**
 * Review e-mails: who receives them, what they say, and the SMTP transport.
 * E-mail is on only when CAIRN_SMTP_URL and CAIRN_MAIL_FROM are both set.
 */
import "server-only";
import { and, eq, isNull } from "drizzle-orm";
import nodemailer from "nodemailer";
import type { Executor } from "../../db/client";
import { reviewRequests, type USER_ROLES, users } from "../../db/schema";
import type { NotificationEvent } from "./enqueue-notification";

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

/** Events that e-mail people; the others go to webhooks only. */
export function isMailedEvent(event: NotificationEvent): boolean {
  return event.startsWith("review.");
}

type Recipient = { userId: string; email: string };
type Role = (typeof USER_ROLES)[number];

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * The review's assignee when there is one, else the users of the assigned
 * role, else the whole team; only people who are enabled and have e-mails on.
 * The payload names the assignment; a payload without it is completed from
 * the review row.
 */
export async function reviewRecipients(
  tx: Executor,
  tenantId: string,
  payload: Record<string, unknown>,
): Promise<Recipient[]> {
  let assignedUserId = text(payload.assignedUserId);
  let assignedRole = text(payload.assignedRole) as Role | undefined;
  const reviewId = text(payload.reviewRequestId);
  if (!("assignedUserId" in payload) && !("assignedRole" in payload) && reviewId) {
    const [review] = await tx
      .select({ userId: reviewRequests.assignedUserId, role: reviewRequests.assignedRole })
      .from(reviewRequests)
      .where(and(eq(reviewRequests.id, reviewId), eq(reviewRequests.tenantId, tenantId)));
    assignedUserId = review?.userId ?? undefined;
    assignedRole = review?.role ?? undefined;
  }
  const who = assignedUserId
    ? eq(users.id, assignedUserId)
    : assignedRole
      ? eq(users.role, assignedRole)
      : undefined;
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

const SUBJECTS: Partial<Record<NotificationEvent, string>> = {
  "review.requested": "Review requested",
  "review.due_soon": "Review due soon",
  "review.timed_out": "Review timed out",
};

/** The e-mail's subject and plain-text body, with a link to the plan's review. */
export function composeReviewMail(
  event: NotificationEvent,
  payload: Record<string, unknown>,
  publicUrl: string,
): { subject: string; body: string } {
  const title = text(payload.planTitle) ?? "a research plan";
  const stepTitle = text(payload.stepTitle);
  const planId = text(payload.planId);
  const lines = [`${SUBJECTS[event] ?? event}: ${title}${stepTitle ? `, ${stepTitle}` : ""}.`, ""];
  const summary = text(payload.summary);
  if (summary) lines.push(summary, "");
  const dueAt = text(payload.dueAt);
  if (dueAt && event !== "review.timed_out") lines.push(`Due: ${dueAt}`);
  const action = text(payload.action) ?? text(payload.onTimeout);
  if (event === "review.timed_out" && action) lines.push(`Cairn applied: ${action}`);
  if (planId) lines.push(`Open the review: ${publicUrl}/plans/${planId}`);
  lines.push(
    "",
    "You receive this because you review for your Cairn team; turn these e-mails off on your account page.",
  );
  return { subject: `[Cairn] ${SUBJECTS[event] ?? event}: ${title}`, body: lines.join("\n") };
}
