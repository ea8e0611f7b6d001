/**
 * Every notification event in one table, `EVENTS`: its name (the key) and its
 * facts, so a new event is one entry here; and the outbox's one insert, in the
 * transaction of the change that raised it. docs/notifications.md, "Events"
 * (its table is checked against this one by events.test.ts) and "The outbox".
 */
import "server-only";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { notificationEvents } from "../../db/schema";
import { run, sqlLiterals, statement } from "../../db/statement";
import type { PlanStatus } from "../../plan-engine/states";
import { noteNotificationQueued } from "./queued";

/** Who an e-mailed event goes to (`mailRecipients` in mail.ts), of those who left e-mails on. */
export type MailRecipients = "reviewers" | "snoozer" | "plan-owner";

export type EventPayload = Record<string, unknown>;

type EventFacts = {
  /** How the webhooks form, the e-mail's subject and the docs name it. */
  label: string;
  /** When it is queued (the docs' table). */
  when: string;
  /** Whose row its payload is read from (`SUBJECTS`). */
  about: Subject;
  /** Queued wherever a plan moves to this status, by the loop's statements too (`planStatusEventCte`). */
  onPlanStatus?: PlanStatus;
  /** The payload's keys beyond its subject's, given by the code that queues it. */
  extra: z.ZodObject;
  /** null: webhooks only. `details`: the e-mail's lines between its first line and the link. */
  mail: MailFacts | null;
};

export type MailFacts = { to: MailRecipients; details: (payload: EventPayload) => string[] };

const NO_EXTRA = z.object({});

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

function reviewDetails(payload: EventPayload, { due }: { due: boolean }): string[] {
  const summary = text(payload.summary);
  const dueAt = text(payload.dueAt);
  return [...(summary ? [summary, ""] : []), ...(due && dueAt ? [`Due: ${dueAt}`] : [])];
}

export const EVENTS = {
  "review.requested": {
    label: "Review requested",
    when: "an agent asked for a person's review",
    about: "review",
    extra: NO_EXTRA,
    mail: { to: "reviewers", details: (payload) => reviewDetails(payload, { due: true }) },
  },
  "review.due_soon": {
    label: "Review due soon",
    when: "a review's deadline is near",
    about: "review",
    extra: NO_EXTRA,
    mail: { to: "reviewers", details: (payload) => reviewDetails(payload, { due: true }) },
  },
  "review.timed_out": {
    label: "Review timed out",
    when: "a review's deadline passed and Cairn applied its timeout action",
    about: "review",
    extra: z.object({ action: z.string().nullable(), reason: z.string() }),
    mail: {
      to: "reviewers",
      details: (payload) => {
        const action = text(payload.action) ?? text(payload.onTimeout);
        return [
          ...reviewDetails(payload, { due: false }),
          ...(action ? [`Cairn applied: ${action}`] : []),
        ];
      },
    },
  },
  "review.escalated": {
    label: "Review escalated",
    when: "nobody answered a review in time, and Cairn handed it to the next level of the team's escalation chain",
    about: "review",
    extra: z.object({ level: z.number(), reason: z.string() }),
    mail: {
      to: "reviewers",
      details: (payload) => [
        text(payload.reason) ?? "Cairn handed this review to you.",
        "",
        ...reviewDetails(payload, { due: true }),
      ],
    },
  },
  "review.handed_over": {
    label: "Review handed over",
    when: "a reviewer handed a review to a colleague, with a note",
    about: "review",
    extra: z.object({ handedOverBy: z.string(), note: z.string().nullable() }),
    mail: {
      to: "reviewers",
      details: (payload) => {
        const note = text(payload.note);
        return [
          `${text(payload.handedOverBy) ?? "A colleague"} handed this review to you${note ? `: ${note}` : "."}`,
          "",
          ...reviewDetails(payload, { due: true }),
        ];
      },
    },
  },
  "review.snooze_returned": {
    label: "Snoozed review back",
    when: "a review a reviewer snoozed is back in their inbox",
    about: "review",
    extra: z.object({ snoozedUserId: z.string(), snoozedUntil: z.string() }),
    mail: {
      to: "snoozer",
      details: (payload) => [
        "The review you snoozed is back in your inbox.",
        "",
        ...reviewDetails(payload, { due: true }),
      ],
    },
  },
  "plan.stalled": {
    label: "Plan stalled",
    when: "a plan was marked stalled (a step whose holder stopped renewing its lease)",
    about: "plan",
    onPlanStatus: "stalled",
    extra: NO_EXTRA,
    mail: null,
  },
  "plan.completed": {
    label: "Plan completed",
    when: "a plan's last step finished",
    about: "plan",
    onPlanStatus: "completed",
    extra: NO_EXTRA,
    mail: null,
  },
  "plan.failed": {
    label: "Plan failed",
    when: "a plan failed (a reviewer rejected, a branch failed it)",
    about: "plan",
    onPlanStatus: "failed",
    extra: NO_EXTRA,
    mail: null,
  },
  "plan.cancelled": {
    label: "Plan cancelled",
    when: "a person or an agent cancelled the plan, saying why",
    about: "plan",
    extra: z.object({ cancelledBy: z.string(), reason: z.string() }),
    mail: {
      to: "plan-owner",
      details: (payload) => [
        `Cancelled by ${text(payload.cancelledBy) ?? "someone"}: ${text(payload.reason) ?? ""}`,
        "",
      ],
    },
  },
} as const satisfies Record<string, EventFacts>;

/** An event's name; the outbox's and the endpoints' columns hold these (lib/db/schema.ts). */
export type NotificationEvent = keyof typeof EVENTS;

/** Every event's name, in the table's order: what a webhook endpoint may subscribe to. */
export const NOTIFICATION_EVENTS = Object.keys(EVENTS) as [
  NotificationEvent,
  ...NotificationEvent[],
];

export function isNotificationEvent(value: unknown): value is NotificationEvent {
  return NOTIFICATION_EVENTS.some((event) => event === value);
}

/** The facts as their common type, for code that takes any event. */
export function eventFacts(event: NotificationEvent): EventFacts {
  return EVENTS[event];
}

type Subject = "plan" | "review";

/**
 * What each subject's events carry, as SQL over its row (`p` the plan; `r`
 * the review, `s` its step, `u` its assignee; a group of people assigned by an
 * escalation level is `assignedUserIds`). A plan's `status` is given,
 * because the loop's statements read the row before their own update.
 */
const SUBJECTS = {
  plan: {
    from: "research_plan p",
    id: "p.id",
    tenantId: "p.tenant_id",
    payload: (status: string) => ({ planId: "p.id", planTitle: "p.name", status }),
  },
  review: {
    from: `review_request r
      join research_plan p on p.id = r.plan_id
      join plan_step s on s.id = r.step_id
      left join app_user u on u.id = r.assigned_user_id`,
    id: "r.id",
    tenantId: "r.tenant_id",
    payload: () => ({
      reviewRequestId: "r.id",
      planId: "r.plan_id",
      planTitle: "p.name",
      stepId: "r.step_id",
      stepOrder: "s.step_order",
      stepType: "s.step_type",
      // The agent's summary is cut to 500 characters in a notification.
      summary: "left(r.summary, 500)",
      questions: "r.questions",
      createdAt: `to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
      dueAt: `to_char(r.due_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
      onTimeout: "r.on_timeout",
      assignedUserId: "r.assigned_user_id",
      assignedUserEmail: "u.email",
      assignedRole: "r.assigned_role",
      assignedUserIds: "to_jsonb(r.assigned_user_ids)",
    }),
  },
} as const satisfies Record<
  Subject,
  { from: string; id: string; tenantId: string; payload: (status: string) => object }
>;

/** The payload keys each subject's events carry, for the docs' check. */
export function subjectPayloadKeys(subject: Subject): string[] {
  return Object.keys(SUBJECTS[subject].payload(""));
}

function jsonObject(columns: Record<string, string>): string {
  return `jsonb_build_object(${Object.entries(columns)
    .map(([key, value]) => `'${key}', ${value}`)
    .join(", ")})`;
}

const payloadStatements = {
  plan: subjectPayload("plan", "p.status::text"),
  review: subjectPayload("review", ""),
};

function subjectPayload(subject: Subject, status: string) {
  const source = SUBJECTS[subject];
  return statement(
    `read a ${subject} event's payload`,
    `select ${jsonObject(source.payload(status))} as payload from ${source.from}
    where ${source.id} = $1::uuid and ${source.tenantId} = $2::uuid`,
    z.object({ payload: z.record(z.string(), z.unknown()) }),
  );
}

/**
 * The outbox's one insert (docs/notifications.md, "The outbox"): use cases
 * queue through `queueEvent`, which reads the payload from the subject's row.
 */
export async function enqueueNotification(
  tx: Executor,
  tenantId: string,
  event: NotificationEvent,
  payload: Record<string, unknown>,
): Promise<void> {
  await tx.insert(notificationEvents).values({ tenantId, event, payload });
  noteNotificationQueued();
}

/**
 * Queues `event` about the row `subjectId` (its plan or review, after the
 * change that raised it) in the caller's transaction: the subject's payload
 * and the event's extra keys.
 */
export async function queueEvent<E extends NotificationEvent>(
  tx: Executor,
  tenantId: string,
  event: E,
  subjectId: string,
  extra: z.input<(typeof EVENTS)[E]["extra"]>,
): Promise<void> {
  const facts = eventFacts(event);
  const [row] = await run(tx, payloadStatements[facts.about], [subjectId, tenantId]);
  if (!row) return;
  await enqueueNotification(tx, tenantId, event, { ...row.payload, ...facts.extra.parse(extra) });
}

/** The event a plan's move to `status` raises (the facts' `onPlanStatus`), if any. */
export function planStatusEvent(status: PlanStatus): NotificationEvent | undefined {
  return NOTIFICATION_EVENTS.find((event) => eventFacts(event).onPlanStatus === status);
}

const STATUS_EVENTS = NOTIFICATION_EVENTS.flatMap((event) => {
  const status = eventFacts(event).onPlanStatus;
  return status ? [{ status, event }] : [];
});

/**
 * The outbox insert of `planStatusEvent` as a CTE of the loop's fixed
 * statements (SQL text expressions; `from` adds relations `status` is read
 * from). It reads the plan row as the statement found it, before the
 * statement's own update, so `p.status <> status` holds only when the status
 * really changes.
 */
export function planStatusEventCte(plan: string, status: string, from = ""): string {
  const event = `case ${status} ${STATUS_EVENTS.map(
    (e) => `when ${sqlLiterals([e.status])} then ${sqlLiterals([e.event])}`,
  ).join(" ")} end`;
  return `insert into notification_event (tenant_id, event, payload)
    select p.tenant_id, ${event}, ${jsonObject(SUBJECTS.plan.payload(status))}
    from research_plan p${from}
    where p.id = ${plan} and p.status::text <> ${status}
      and ${status} in (${sqlLiterals(STATUS_EVENTS.map((e) => e.status))})`;
}
