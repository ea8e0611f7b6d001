/**
 * Snoozing a review (docs/reviews.md, "Snooze"): out of the snoozer's inbox
 * list, its count and the Inbox link's count, and nobody else's; back on
 * un-snooze or when its time comes, returned by the scheduler once (four
 * schedulers racing on two pools of one PostgreSQL database) with its trail
 * row and notification, also by the tick at start; ended by the review's
 * decision; refused with nothing stored for a bad time or zone, a decided
 * review, another team's review or an agent. In process, on PGlite and on
 * PostgreSQL 15.
 */
import { and, eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { notificationEvents, planAuditLog, reviewSnoozes } from "@/lib/db/schema";
import { startReviewScheduler } from "@/lib/services/reviews/review-scheduler";
import { returnDueSnoozes } from "@/lib/services/reviews/snooze-returns";
import { snoozeReview, unsnoozeReview } from "@/lib/services/reviews/snooze-review";
import type { ServiceContext } from "@/lib/services/shared/context";
import { countAwaitingReview } from "@/lib/services/views/plans-list";
import { listInbox } from "@/lib/services/views/review-inbox";
import { countSnoozed, snoozedUntil } from "@/lib/services/views/snoozed-reviews";
import { BACKENDS } from "./support/databases";
import {
  inProcessAgent,
  signedInAdmin,
  signedInMember,
  tenantContext,
  useFreshTenant,
} from "./support/in-process";
import { POLL, pendingReview, raceFour, SCHEDULER_SETTINGS, useTwoPools } from "./support/reviews";
import { readRows } from "./support/rows";

/** A snooze that comes back two seconds on (to the second, on a UTC clock). */
function soon(reviewRequestId: string) {
  const at = new Date(Date.now() + 2_000).toISOString().slice(0, 19);
  return { reviewRequestId, until: "at" as const, at, timeZone: "UTC" };
}

async function waitUntil(iso: string) {
  await new Promise((resolve) =>
    setTimeout(resolve, Math.max(0, Date.parse(iso) - Date.now() + 100)),
  );
}

describe.each(BACKENDS)("review snooze on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const people = {} as { admin: ServiceContext; ada: ServiceContext; adaId: string };

  beforeAll(async () => {
    const ada = await signedInMember(tenant.agent.ctx, "Alpha", {
      email: "ada@example.com",
      label: "Ada",
    });
    people.adaId = ada.userId;
    people.ada = ada.ctx;
    people.admin = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
  });

  const inboxIds = async (ctx: ServiceContext, snoozed = false) =>
    (await listInbox(ctx, { role: "researcher", snoozed })).reviews.map((r) => r.reviewRequestId);

  async function trail(planId: string, action: string) {
    const rows = await tenant.handle.db
      .select()
      .from(planAuditLog)
      .where(and(eq(planAuditLog.planId, planId), eq(planAuditLog.eventType, "user_reviewed")));
    return rows.filter((row) => row.payload.action === action);
  }

  async function returned(reviewRequestId: string) {
    const rows = await tenant.handle.db.select().from(notificationEvents);
    return rows.filter(
      (row) =>
        row.event === "review.snooze_returned" && row.payload.reviewRequestId === reviewRequestId,
    );
  }

  it("leaves only the snoozer's inbox and counts, shows on their Snoozed view, and comes back on un-snooze", async () => {
    const { ada, admin, adaId } = people;
    const { planId, reviewRequestId } = await pendingReview(tenant.agent, "Later");
    const before = {
      ada: await countAwaitingReview(ada),
      admin: await countAwaitingReview(admin),
      total: (await listInbox(ada, { role: "researcher" })).total,
    };
    const snoozed = await snoozeReview(ada, {
      reviewRequestId,
      until: "hour",
      timeZone: "Europe/Paris",
    });
    expect(Date.parse(snoozed.until) - Date.now()).toBeGreaterThan(3_500_000);

    expect(await inboxIds(ada)).not.toContain(reviewRequestId);
    expect((await listInbox(ada, { role: "researcher" })).total).toBe(before.total - 1);
    expect(await countAwaitingReview(ada)).toBe(before.ada - 1);
    expect(await inboxIds(ada, true)).toEqual([reviewRequestId]);
    expect(await countSnoozed(ada)).toBe(1);
    expect(await snoozedUntil(ada, [reviewRequestId])).toEqual(
      new Map([[reviewRequestId, snoozed.until]]),
    );
    // Colleagues still see it, and have nothing snoozed.
    expect(await inboxIds(admin)).toContain(reviewRequestId);
    expect(await countAwaitingReview(admin)).toBe(before.admin);
    expect(await inboxIds(admin, true)).toEqual([]);
    expect(await countSnoozed(admin)).toBe(0);

    const [row] = await trail(planId, "review_snoozed");
    expect(row).toMatchObject({
      actorType: "user",
      actorId: adaId,
      actorLabel: "Ada",
      payload: { reviewRequestId, until: snoozed.until, timeZone: "Europe/Paris" },
    });

    expect(await unsnoozeReview(ada, { reviewRequestId })).toEqual({ reviewRequestId });
    expect(await inboxIds(ada)).toContain(reviewRequestId);
    expect(await countAwaitingReview(ada)).toBe(before.ada);
    expect(await countSnoozed(ada)).toBe(0);
    expect(await trail(planId, "review_unsnoozed")).toMatchObject([
      { actorLabel: "Ada", payload: { snoozedUserId: adaId, until: snoozed.until } },
    ]);
    // Nothing left to un-snooze, and the scheduler has nothing to return.
    await expect(unsnoozeReview(ada, { reviewRequestId })).rejects.toMatchObject({
      code: "CONFLICT",
    });
    expect(await returned(reviewRequestId)).toEqual([]);
  });

  it("comes back when its time comes, once, with its trail row and a notification to the snoozer", async () => {
    const { ada, adaId } = people;
    const { planId, reviewRequestId } = await pendingReview(tenant.agent, "Soon");
    const { until } = await snoozeReview(ada, soon(reviewRequestId));
    expect(await inboxIds(ada)).not.toContain(reviewRequestId);
    await waitUntil(until);
    // Back in the inbox on time, before any scheduler ran.
    expect(await inboxIds(ada)).toContain(reviewRequestId);
    expect(await returnDueSnoozes(tenant.handle.db, SCHEDULER_SETTINGS)).toBe(1);
    expect(await returnDueSnoozes(tenant.handle.db, SCHEDULER_SETTINGS)).toBe(0);

    const events = await returned(reviewRequestId);
    expect(events).toHaveLength(1);
    expect(events[0]?.payload).toMatchObject({
      reviewRequestId,
      planId,
      planTitle: "Soon",
      snoozedUserId: adaId,
      snoozedUntil: until,
    });
    expect(await trail(planId, "snooze_returned")).toMatchObject([
      {
        actorType: "system",
        actorLabel: "Cairn (snooze)",
        payload: { reviewRequestId, snoozedUserId: adaId, until },
      },
    ]);
    const [snooze] = await tenant.handle.db
      .select()
      .from(reviewSnoozes)
      .where(eq(reviewSnoozes.reviewRequestId, reviewRequestId));
    expect(snooze?.returnedAt).toBeInstanceOf(Date);
  });

  it("comes back a bounded number a tick, the next tick going on", async () => {
    const reviews: { reviewRequestId: string; until: string }[] = [];
    for (const title of ["First", "Second", "Third"]) {
      const { reviewRequestId } = await pendingReview(tenant.agent, title);
      reviews.push({
        reviewRequestId,
        until: (await snoozeReview(people.ada, soon(reviewRequestId))).until,
      });
    }
    await waitUntil(reviews[2]?.until ?? "");
    const returnedOnce = async () => {
      const counts = await Promise.all(reviews.map((r) => returned(r.reviewRequestId)));
      return counts.filter((events) => events.length === 1).length;
    };
    expect(await returnDueSnoozes(tenant.handle.db, SCHEDULER_SETTINGS, 2)).toBe(2);
    expect(await returnedOnce()).toBe(2);
    expect(await returnDueSnoozes(tenant.handle.db, SCHEDULER_SETTINGS, 2)).toBe(1);
    expect(await returnedOnce()).toBe(3);
  });

  it("comes back on the tick at start when it fell due while no instance ran", async () => {
    const { planId, reviewRequestId } = await pendingReview(tenant.agent, "Outage");
    await waitUntil((await snoozeReview(people.ada, soon(reviewRequestId))).until);
    // An hour between ticks: only the tick at start can return it.
    const stop = startReviewScheduler(async () => tenant.handle.db, SCHEDULER_SETTINGS, 3_600_000);
    try {
      await expect.poll(async () => (await returned(reviewRequestId)).length, POLL).toBe(1);
      expect(await trail(planId, "snooze_returned")).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it("ends with the review's decision: nothing comes back, nothing is left to un-snooze", async () => {
    const { ada } = people;
    const { planId, reviewRequestId } = await pendingReview(tenant.agent, "Decided");
    const { until } = await snoozeReview(ada, soon(reviewRequestId));
    await tenant.agent.ok("submit_user_decision", { planId, reviewRequestId, decision: "approve" });
    expect(await countSnoozed(ada)).toBe(0);
    await expect(unsnoozeReview(ada, { reviewRequestId })).rejects.toMatchObject({
      code: "CONFLICT",
    });
    await waitUntil(until);
    expect(await returnDueSnoozes(tenant.handle.db, SCHEDULER_SETTINGS)).toBe(0);
    expect(await returned(reviewRequestId)).toEqual([]);
    expect(await trail(planId, "snooze_returned")).toEqual([]);
  });

  it("refuses a bad zone or time, a decided review, another team's review and an agent, storing nothing", async () => {
    const { ada } = people;
    const { planId, reviewRequestId } = await pendingReview(tenant.agent, "Refused");
    const stored = async () =>
      (
        await readRows<{ n: number }>(
          tenant.handle.db,
          sql`select count(*)::int as n from review_snooze where review_request_id = ${reviewRequestId}::uuid`,
        )
      )[0]?.n;
    const inAMonth = new Date(Date.now() + 31 * 86_400_000).toISOString().slice(0, 16);
    for (const [input, field] of [
      [{ until: "hour", timeZone: "+05:00" }, "timeZone"],
      [{ until: "tomorrow", timeZone: "Mars/Olympus_Mons" }, "timeZone"],
      [{ until: "at", at: "2020-01-01T09:00", timeZone: "UTC" }, "at"],
      [{ until: "at", at: inAMonth, timeZone: "UTC" }, "at"],
      [{ until: "at", at: "2026-02-30T09:00", timeZone: "UTC" }, "at"],
      [{ until: "at", timeZone: "UTC" }, "at"],
    ] as const) {
      await expect(snoozeReview(ada, { reviewRequestId, ...input })).rejects.toMatchObject({
        code: "VALIDATION_ERROR",
        metadata: { field },
      });
    }
    // Another team's review does not exist for it; an agent has no inbox to snooze from.
    const { ctx: bob } = await signedInMember(
      await tenantContext(tenant.handle.db, "Beta"),
      "Beta",
      {
        email: "bob@beta.example.com",
        label: "Bob",
      },
    );
    await expect(
      snoozeReview(bob, { reviewRequestId, until: "hour", timeZone: "UTC" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(unsnoozeReview(bob, { reviewRequestId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(
      snoozeReview(tenant.agent.ctx, { reviewRequestId, until: "hour", timeZone: "UTC" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    // Another team's person counts and lists none of this team's reviews as snoozed.
    expect(await countSnoozed(bob)).toBe(0);
    expect(await inboxIds(bob)).toEqual([]);

    await tenant.agent.ok("submit_user_decision", { planId, reviewRequestId, decision: "approve" });
    await expect(
      snoozeReview(ada, { reviewRequestId, until: "hour", timeZone: "UTC" }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await stored()).toBe(0);
    expect(await trail(planId, "review_snoozed")).toEqual([]);
  });
});

describe("four schedulers and due snoozes on two pools of postgres", () => {
  const pools = useTwoPools();

  it("returns each due snooze exactly once", async () => {
    const agent = inProcessAgent(await tenantContext(pools.first.db, "Race"));
    // tenantContext's admin, race@example.com, as a person signed in.
    const [admin] = await pools.first.db.query.users.findMany({
      where: (users, { eq: equals }) => equals(users.email, "race@example.com"),
    });
    const person = {
      ...agent.ctx,
      actor: { type: "user" as const, id: admin?.id ?? null, label: "Racer" },
    };
    const count = 6;
    const ids: string[] = [];
    let last = "";
    for (let i = 0; i < count; i += 1) {
      const { reviewRequestId } = await pendingReview(agent, `Race ${i}`);
      ids.push(reviewRequestId);
      last = (await snoozeReview(person, soon(reviewRequestId))).until;
    }
    await waitUntil(last);
    expect(await raceFour(pools, (db) => returnDueSnoozes(db, SCHEDULER_SETTINGS))).toBe(count);
    const events = (await pools.first.db.select().from(notificationEvents)).filter(
      (row) => row.event === "review.snooze_returned",
    );
    expect(events.map((row) => row.payload.reviewRequestId).sort()).toEqual([...ids].sort());
    const rows = (await pools.first.db.select().from(planAuditLog)).filter(
      (row) => row.payload.action === "snooze_returned",
    );
    expect(rows).toHaveLength(count);
  });
});
