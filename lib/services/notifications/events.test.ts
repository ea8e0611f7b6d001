/**
 * docs/notifications.md's table of events and docs/reviews.md's table of the
 * review events' payload against their facts (`EVENTS`), and the e-mail each
 * mailed event makes of them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { codeNames, docTable } from "../../docs-table";
import {
  EVENTS,
  eventFacts,
  NOTIFICATION_EVENTS,
  planStatusEvent,
  subjectPayloadKeys,
} from "./events";
import { composeMail, MAIL_RECIPIENTS } from "./mail";

/** The part of `doc` from the heading `from` to the next heading of its level. */
function section(doc: string, from: string): string {
  const text = readFileSync(doc, "utf8");
  const start = text.indexOf(`\n${from}\n`);
  expect(start, `${doc}: ${from}`).toBeGreaterThanOrEqual(0);
  const level = from.slice(0, from.indexOf(" ") + 1);
  const end = text.indexOf(`\n${level}`, start + from.length + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

describe("notification events", () => {
  it("are documented as their facts say, one row each", () => {
    expect(docTable("docs/notifications.md", "Event")).toEqual(
      NOTIFICATION_EVENTS.map((event) => {
        const { when, mail } = eventFacts(event);
        return [`\`${event}\``, when, mail ? `to ${MAIL_RECIPIENTS[mail.to].who}` : "no"];
      }),
    );
  });

  it("name the extra payload keys the docs list", () => {
    const doc = readFileSync("docs/notifications.md", "utf8");
    for (const event of NOTIFICATION_EVENTS) {
      for (const key of Object.keys(eventFacts(event).extra.shape)) {
        expect(doc, `${event}: ${key}`).toContain(`\`${key}\``);
      }
    }
  });

  it("about a review carry the payload docs/reviews.md's table gives", () => {
    const keys = docTable("docs/reviews.md", "key", "## Notifications queued");
    expect(keys.map(([key = ""]) => codeNames(key).join())).toEqual(subjectPayloadKeys("review"));
  });

  it("about a plan carry the keys docs/notifications.md gives", () => {
    const requests = section("docs/notifications.md", "## Webhook requests");
    const planData = requests.slice(requests.indexOf("`data` for `plan.*`"));
    for (const key of subjectPayloadKeys("plan")) {
      expect(planData.slice(0, planData.indexOf("For")), key).toContain(`\`${key}\``);
    }
  });

  it("raised by a plan's status are the plan's, one per status", () => {
    const raised = NOTIFICATION_EVENTS.filter((event) => eventFacts(event).onPlanStatus);
    for (const event of raised) {
      const status = eventFacts(event).onPlanStatus;
      expect(event).toBe(`plan.${status}`);
      if (status) expect(planStatusEvent(status)).toBe(event);
    }
    // Queued by any status write, which has nothing more to give.
    for (const event of raised)
      expect(eventFacts(event).extra.safeParse({}).success, event).toBe(true);
    expect(planStatusEvent("executing")).toBeUndefined();
    // Cancelling says who and why, so it is queued by cancel_plan itself.
    expect(planStatusEvent("cancelled")).toBeUndefined();
  });

  it("mail plan.cancelled to whoever started the plan, with who cancelled it and why", () => {
    const { label, mail } = EVENTS["plan.cancelled"];
    const { subject, body } = composeMail(
      label,
      mail,
      { planId: "p-1", planTitle: "Coffee and sleep", cancelledBy: "ada", reason: "Out of scope" },
      "https://cairn.example.com",
    );
    expect(subject).toBe("[Cairn] Plan cancelled: Coffee and sleep");
    expect(body).toContain("Cancelled by ada: Out of scope");
    expect(body).toContain("Open the plan: https://cairn.example.com/plans/p-1");
    expect(body).toContain("because you started this research plan");
  });
});
