/**
 * Escalation chains (docs/reviews.md, "Escalation chains"): the team's chain
 * is validated where it is set; a two-level chain hands a review on in order,
 * with a trail row and a `review.escalated` to the level's people at each
 * level, and the inbox's "assigned to me" and the e-mail follow it; a
 * person's decision stops it; the deadline's action, as the policy in force
 * allows it, ends it. In process, on PGlite and on PostgreSQL 15, and on
 * PostgreSQL four schedulers on two pools racing for the same due levels.
 */
import { and, eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { notificationEvents, planAuditLog, teamAuditLog } from "@/lib/db/schema";
import { createUser } from "@/lib/services/accounts/create-user";
import { setUserDisabled } from "@/lib/services/accounts/set-user-disabled";
import { mailRecipients } from "@/lib/services/notifications/mail";
import { submitUserDecision } from "@/lib/services/plans/submit-user-decision";
import { applyDueReviews } from "@/lib/services/reviews/deadline-actions";
import { setDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import { getEscalationChain, setEscalationChain } from "@/lib/services/reviews/escalation-chain";
import { applyDueEscalations } from "@/lib/services/reviews/escalation-levels";
import { setReviewDefaults } from "@/lib/services/reviews/review-defaults";
import { runReviewScheduler } from "@/lib/services/reviews/review-scheduler";
import { pendingReviewOf } from "@/lib/services/reviews/review-view";
import type { ServiceContext } from "@/lib/services/shared/context";
import { readPendingReview, teamMembers } from "@/lib/services/views/pending-review";
import { getPlanPage } from "@/lib/services/views/plan-page";
import { listInbox } from "@/lib/services/views/review-inbox";
import { BACKENDS } from "../support/databases";
import {
  type InProcessAgent,
  inProcessAgent,
  signedInAdmin,
  tenantContext,
  useFreshTenant,
} from "../support/in-process";
import {
  pendingReview,
  raceFour,
  reviewRow,
  SCHEDULER_SETTINGS,
  useTwoPools,
} from "../support/reviews";

type Person = ServiceContext & { actor: { id: string } };

async function person(admin: ServiceContext, email: string): Promise<Person> {
  const user = await createUser(admin.db, {
    email,
    password: "a long enough password",
    role: "researcher",
    tenant: "Alpha",
  });
  return { ...admin, actor: { type: "user", id: user.userId, label: email } };
}

/** Makes the review's next level due now, as the clock would (a level waits at least a minute). */
async function levelComes(db: DatabaseHandle["db"], id: string) {
  await db.execute(
    sql`update review_request set escalation_due_at = now() - interval '1 second',
      created_at = created_at - (escalation_due_at - now()) - interval '1 second'
      where id = ${id}::uuid and escalation_due_at is not null`,
  );
}

async function escalatedEvents(db: DatabaseHandle["db"], id: string) {
  const rows = await db
    .select()
    .from(notificationEvents)
    .where(eq(notificationEvents.event, "review.escalated"))
    .orderBy(notificationEvents.createdAt);
  return rows.filter((row) => row.payload.reviewRequestId === id);
}

async function escalatedTrail(db: DatabaseHandle["db"], planId: string) {
  const rows = await db
    .select()
    .from(planAuditLog)
    .where(and(eq(planAuditLog.planId, planId), eq(planAuditLog.eventType, "user_reviewed")))
    .orderBy(planAuditLog.seq);
  return rows.filter((row) => row.payload.action === "review_escalated");
}

describe.each(BACKENDS)("escalation chains on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const people = {} as { admin: Person; ada: Person; bob: Person; cy: Person; gone: Person };

  beforeAll(async () => {
    people.admin = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
    people.ada = await person(tenant.agent.ctx, "ada@example.com");
    people.bob = await person(tenant.agent.ctx, "bob@example.com");
    people.cy = await person(tenant.agent.ctx, "cy@example.com");
    people.gone = await person(tenant.agent.ctx, "gone@example.com");
    await setUserDisabled(people.admin, { userId: people.gone.actor.id, disabled: true });
  });

  it("refuses a chain that is not 1 to 5 levels of 1 minute to 30 days to active members, and changes nothing", async () => {
    const level = (to: unknown, afterSeconds = 600) => ({ afterSeconds, from: "previous", to });
    const refusals: [unknown[] | null, RegExp][] = [
      [[], /levels/],
      [Array.from({ length: 6 }, () => level("admins")), /levels/],
      [[level("admins", 30)], /Level 1: the time before it is 1 minute to 30 days/],
      [[level("admins"), level("admins", 31 * 24 * 3600)], /Level 2: the time before it/],
      [[level({ people: [] })], /people/],
      [[level({ people: ["nobody@example.com"] })], /nobody@example.com is not an active member/],
      [[level({ people: ["gone@example.com"] })], /gone@example.com is not an active member/],
      [[level({ people: ["ada@example.com", "ADA@example.com"] })], /different people/],
    ];
    for (const [levels, message] of refusals) {
      await expect(
        setEscalationChain(people.admin, { levels } as Parameters<typeof setEscalationChain>[1]),
      ).rejects.toMatchObject({
        code: "VALIDATION_ERROR",
        message: expect.stringMatching(message),
      });
    }
    expect(await getEscalationChain(people.admin)).toBeNull();
    const changes = await tenant.handle.db
      .select()
      .from(teamAuditLog)
      .where(eq(teamAuditLog.eventType, "review_escalation_changed"));
    expect(changes).toEqual([]);
  });

  it("escalates a two-level chain in order, notifying each level's people, once each", async () => {
    const { db } = tenant.handle;
    await setEscalationChain(people.admin, {
      levels: [
        {
          afterSeconds: 600,
          from: "request",
          to: { people: ["Ada@example.com", "bob@example.com"] },
        },
        { afterSeconds: 1800, from: "previous", to: "admins" },
      ],
    });
    expect(await getEscalationChain(people.admin)).toEqual([
      {
        afterSeconds: 600,
        from: "request",
        to: { people: ["ada@example.com", "bob@example.com"] },
      },
      { afterSeconds: 1800, from: "previous", to: "admins" },
    ]);
    const [change] = await db
      .select()
      .from(teamAuditLog)
      .where(eq(teamAuditLog.eventType, "review_escalation_changed"));
    expect(change?.payload).toMatchObject({ from: null, to: [{ afterSeconds: 600 }, {}] });

    const { planId, reviewRequestId } = await pendingReview(tenant.agent);
    const asked = await reviewRow(db, reviewRequestId);
    expect(asked.escalationLevel).toBe(0);
    expect(asked.escalationDueAt?.getTime()).toBe(asked.createdAt.getTime() + 600_000);
    // Not due yet: nothing moves.
    expect(await applyDueEscalations(db, SCHEDULER_SETTINGS)).toBe(0);

    await levelComes(db, reviewRequestId);
    expect((await runReviewScheduler(db, SCHEDULER_SETTINGS)).escalated).toBe(1);
    const first = await reviewRow(db, reviewRequestId);
    expect(first).toMatchObject({
      status: "pending",
      escalationLevel: 1,
      assignedUserId: null,
      assignedRole: null,
      assignedUserIds: [people.ada.actor.id, people.bob.actor.id],
    });
    expect(first.escalationDueAt?.getTime()).toBeGreaterThan(Date.now() + 1700_000);
    // Each of the level's people finds it under "assigned to me"; someone else does not.
    for (const [who, mine] of [
      [people.ada, true],
      [people.bob, true],
      [people.cy, false],
    ] as const) {
      const inbox = await listInbox(who, { mine: true, role: "researcher" });
      expect(inbox.reviews.some((r) => r.reviewRequestId === reviewRequestId)).toBe(mine);
    }
    // The inbox, the review card's read and the plan page name them as its assignees.
    const [listed] = (await listInbox(people.ada, { mine: true, role: "researcher" })).reviews;
    expect(listed?.assignedUserLabel).toBe("ada@example.com, bob@example.com");
    // The page names the level's people; their ids stay on the server.
    expect(listed).not.toHaveProperty("assignedUserIds");
    const members = await teamMembers(people.ada);
    expect((await readPendingReview(people.ada, planId))?.assignedUserLabel).toBe(
      "ada@example.com, bob@example.com",
    );
    const page = await getPlanPage(people.ada, planId);
    if (!page) throw new Error("the plan page is missing");
    expect(pendingReviewOf(page, members)?.assignedUserLabel).toBe(
      "ada@example.com, bob@example.com",
    );
    const [levelOne] = await escalatedEvents(db, reviewRequestId);
    expect(levelOne?.payload).toMatchObject({
      level: 1,
      assignedUserIds: [people.ada.actor.id, people.bob.actor.id],
      reason: expect.stringContaining("ada@example.com, bob@example.com (escalation level 1)"),
    });
    const mailedOne = await mailRecipients(db, tenant.agent.ctx.tenantId, "reviewers", {
      ...levelOne?.payload,
    });
    expect(mailedOne.map((r) => r.email).sort()).toEqual(["ada@example.com", "bob@example.com"]);

    // A second run finds nothing due: the level applied once.
    expect(await applyDueEscalations(db, SCHEDULER_SETTINGS)).toBe(0);

    await levelComes(db, reviewRequestId);
    expect(await applyDueEscalations(db, SCHEDULER_SETTINGS)).toBe(1);
    expect(await reviewRow(db, reviewRequestId)).toMatchObject({
      status: "pending",
      escalationLevel: 2,
      escalationDueAt: null,
      assignedRole: "admin",
      assignedUserIds: null,
    });
    const events = await escalatedEvents(db, reviewRequestId);
    expect(events.map((e) => [e.payload.level, e.payload.assignedRole])).toEqual([
      [1, null],
      [2, "admin"],
    ]);
    const mailedTwo = await mailRecipients(db, tenant.agent.ctx.tenantId, "reviewers", {
      ...events[1]?.payload,
    });
    expect(mailedTwo.map((r) => r.email)).toEqual(["alpha@example.com"]);
    const trail = await escalatedTrail(db, planId);
    expect(
      trail.map((row) => [row.actorLabel, row.payload.level, row.payload.assignedUserEmails]),
    ).toEqual([
      ["Cairn (deadline)", 1, ["ada@example.com", "bob@example.com"]],
      ["Cairn (deadline)", 2, []],
    ]);
    expect(trail[1]?.payload).toMatchObject({ assignedRole: "admin" });
    // The chain is done: nothing more comes.
    await levelComes(db, reviewRequestId);
    expect(await applyDueEscalations(db, SCHEDULER_SETTINGS)).toBe(0);
  });

  it("stops when a person decides", async () => {
    const { db } = tenant.handle;
    const { planId, reviewRequestId } = await pendingReview(tenant.agent);
    await submitUserDecision(people.cy, { planId, reviewRequestId, decision: "skip" });
    await levelComes(db, reviewRequestId);
    expect(await applyDueEscalations(db, SCHEDULER_SETTINGS)).toBe(0);
    expect(await reviewRow(db, reviewRequestId)).toMatchObject({
      status: "decided",
      escalationLevel: 0,
    });
    expect(await escalatedEvents(db, reviewRequestId)).toEqual([]);
    expect(await escalatedTrail(db, planId)).toEqual([]);
  });

  it("ends with the deadline's action as the policy in force allows it", async () => {
    const { db } = tenant.handle;
    // An agent's skip, allowed when set; the team then lets only people decide.
    const { planId, reviewRequestId } = await pendingReview(tenant.agent, "Escalation", {
      deadlineSeconds: 3600,
      onTimeout: "skip",
    });
    await levelComes(db, reviewRequestId);
    expect(await applyDueEscalations(db, SCHEDULER_SETTINGS)).toBe(1);
    await setDecisionPolicy(people.admin, { decisionPolicy: "people_only" });
    await db.execute(
      sql`update review_request set due_at = now() - interval '1 second'
        where id = ${reviewRequestId}::uuid`,
    );
    expect(await applyDueReviews(db, SCHEDULER_SETTINGS)).toBe(1);
    // No skip without a person: the deadline hands it to the admins, and the chain ends there.
    const ended = await reviewRow(db, reviewRequestId);
    expect(ended).toMatchObject({
      status: "pending",
      onTimeout: "escalate",
      onTimeoutReplaced: "skip",
      assignedRole: "admin",
      assignedUserIds: null,
      escalationLevel: 1,
      escalationDueAt: null,
    });
    expect(ended.escalatedAt).not.toBeNull();
    expect(await applyDueEscalations(db, SCHEDULER_SETTINGS)).toBe(0);
    const trail = await escalatedTrail(db, planId);
    expect(trail.map((row) => row.payload.level ?? "deadline")).toEqual([1, "deadline"]);

    // The team's own default approve is its own choice, and runs under people_only.
    await setReviewDefaults(people.admin, { deadlineSeconds: 7200, onTimeout: "approve" });
    const own = await pendingReview(tenant.agent);
    await db.execute(
      sql`update review_request set due_at = now() - interval '1 second'
        where id = ${own.reviewRequestId}::uuid`,
    );
    expect(await applyDueReviews(db, SCHEDULER_SETTINGS)).toBe(1);
    expect(await reviewRow(db, own.reviewRequestId)).toMatchObject({
      status: "decided",
      escalationLevel: 0,
    });
    expect(await applyDueEscalations(db, SCHEDULER_SETTINGS)).toBe(0);
    await setReviewDefaults(people.admin, { deadlineSeconds: null, onTimeout: null });
    await setDecisionPolicy(people.admin, { decisionPolicy: "people_and_agents" });
  });

  it("hands a level's review to the admins when its people have left, and a review requested before the chain has none", async () => {
    const { db } = tenant.handle;
    await setEscalationChain(people.admin, { levels: null });
    const before = await pendingReview(tenant.agent);
    expect(await reviewRow(db, before.reviewRequestId)).toMatchObject({
      escalationChain: null,
      escalationDueAt: null,
    });
    const leaving = await person(tenant.agent.ctx, "leaving@example.com");
    await setEscalationChain(people.admin, {
      levels: [{ afterSeconds: 60, from: "request", to: { people: ["leaving@example.com"] } }],
    });
    const { planId, reviewRequestId } = await pendingReview(tenant.agent);
    await setUserDisabled(people.admin, { userId: leaving.actor.id, disabled: true });
    await levelComes(db, reviewRequestId);
    expect(await applyDueEscalations(db, SCHEDULER_SETTINGS)).toBe(1);
    expect(await reviewRow(db, reviewRequestId)).toMatchObject({
      assignedRole: "admin",
      assignedUserId: null,
      assignedUserIds: null,
    });
    const [row] = await escalatedTrail(db, planId);
    expect(row?.payload).toMatchObject({ level: 1, assignedRole: "admin" });
    await setEscalationChain(people.admin, { levels: null });
  });
});

describe("escalation levels raced by four schedulers on two pools of one postgres database", () => {
  const pools = useTwoPools();
  let agent: InProcessAgent;
  let admin: Person;

  beforeAll(async () => {
    agent = inProcessAgent(await tenantContext(pools.first.db, "Alpha"));
    admin = await signedInAdmin(pools.first.db, agent.ctx);
  });

  it("applies each level exactly once", async () => {
    await setEscalationChain(admin, {
      levels: [
        { afterSeconds: 60, from: "request", to: { people: ["alpha@example.com"] } },
        { afterSeconds: 60, from: "previous", to: "admins" },
      ],
    });
    const count = 6;
    const reviews = [];
    for (let i = 0; i < count; i += 1) reviews.push(await pendingReview(agent));
    for (const level of [1, 2]) {
      for (const review of reviews) await levelComes(pools.first.db, review.reviewRequestId);
      expect(await raceFour(pools, (db) => applyDueEscalations(db, SCHEDULER_SETTINGS))).toBe(
        count,
      );
      for (const review of reviews) {
        expect((await reviewRow(pools.first.db, review.reviewRequestId)).escalationLevel).toBe(
          level,
        );
      }
    }
    for (const review of reviews) {
      const events = await escalatedEvents(pools.first.db, review.reviewRequestId);
      expect(events.map((e) => e.payload.level)).toEqual([1, 2]);
      const trail = await escalatedTrail(pools.first.db, review.planId);
      expect(trail.map((row) => row.payload.level)).toEqual([1, 2]);
    }
  });
});
