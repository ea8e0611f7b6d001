/**
 * Review deadlines and assignment (docs/reviews.md), in process on PGlite and
 * PostgreSQL 15: each onTimeout action applied by the scheduler with the
 * "Cairn (deadline)" actor, the opportunistic run of get_next_step, the
 * due-soon notice, the start-up run that catches up after a restart, and on
 * PostgreSQL two instances racing for the same due reviews.
 */
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { notificationEvents, planAuditLog, reviewDecisions, tenants } from "@/lib/db/schema";
import { arrayParam } from "@/lib/db/statement";
import { createApiKey } from "@/lib/services/accounts/create-api-key";
import { createUser } from "@/lib/services/accounts/create-user";
import { createPlan } from "@/lib/services/plans/create-plan";
import { getNextStep } from "@/lib/services/plans/get-next-step";
import { getPlanStatus } from "@/lib/services/plans/get-plan-status";
import { requestUserReview } from "@/lib/services/plans/request-user-review";
import { submitStepResult } from "@/lib/services/plans/submit-step-result";
import { submitUserDecision } from "@/lib/services/plans/submit-user-decision";
import { assignReview } from "@/lib/services/reviews/assign-review";
import { applyDueReviews, dueWhere } from "@/lib/services/reviews/deadline-actions";
import {
  deadlineStateColumns,
  INBOX_SETTLES,
  settleDeadlinesOfTenant,
} from "@/lib/services/reviews/deadline-state";
import {
  DUE_SOON_BATCH,
  queueDueSoonReviews,
  runReviewScheduler,
  startReviewScheduler,
} from "@/lib/services/reviews/review-scheduler";
import type { ServiceContext } from "@/lib/services/shared/context";
import { countAwaitingReview } from "@/lib/services/views/plans-list";
import { listInbox } from "@/lib/services/views/review-inbox";
import { BACKENDS, freshDatabase } from "./support/databases";
import { genericPlan } from "./support/generic-plan";
import { plainResult } from "./support/mcp-client";
import { POLL, raceFour, reviewRow, SCHEDULER_SETTINGS, useTwoPools } from "./support/reviews";
import { readRows } from "./support/rows";

type Team = { ctx: ServiceContext; adminId: string; researcherId: string };

async function seedTeam(db: DatabaseHandle["db"], name: string): Promise<Team> {
  const admin = await createUser(db, {
    email: `admin@${name}.example.com`,
    password: "a long enough password",
    role: "admin",
    tenant: name,
  });
  const researcher = await createUser(db, {
    email: `ada@${name}.example.com`,
    password: "a long enough password",
    role: "researcher",
    tenant: name,
  });
  const key = await createApiKey(db, { email: `admin@${name}.example.com` });
  return {
    ctx: {
      db,
      tenantId: admin.tenantId,
      actor: { type: "api_key", id: key.apiKeyId, label: "deadline agent" },
      stallThresholdSeconds: 1800,
    },
    adminId: admin.userId,
    researcherId: researcher.userId,
  };
}

/** A plan of three steps with step 1 in progress. */
async function planAtFirstStep(ctx: ServiceContext, name = "Deadline") {
  const { planId } = await createPlan(ctx, {
    name,
    researchQuestion: "q",
    steps: [1, 2, 3].map((n) => ({ stepType: "search" as const, instructions: `Step ${n}.` })),
  });
  const next = await getNextStep(ctx, { planId });
  if (next.status !== "ready") throw new Error(`expected a ready step, got ${next.status}`);
  return { planId, stepId: next.step.stepId };
}

async function events(db: DatabaseHandle["db"], reviewRequestId: string) {
  const rows = await db.select().from(notificationEvents);
  return rows.filter((row) => row.payload.reviewRequestId === reviewRequestId);
}

/**
 * `n` copies of a pending review whose deadline is a minute away after nine of
 * its ten minutes (within its last 20%: due soon), each with its own id; many
 * reviews due soon at once, without a plan each.
 */
async function dueSoonCopies(db: DatabaseHandle["db"], reviewRequestId: string, n: number) {
  const rows = await readRows<{ id: string }>(
    db,
    sql`insert into review_request
      select (jsonb_populate_record(null::review_request, to_jsonb(r) || jsonb_build_object(
        'id', gen_random_uuid(), 'created_at', now() - interval '540 seconds',
        'due_at', now() + interval '60 seconds', 'due_soon_notified_at', null))).*
      from review_request r cross join generate_series(1, ${n}) where r.id = ${reviewRequestId}::uuid
      returning id`,
  );
  return rows.map((row) => row.id);
}

/** `n` plans, each waiting on a review whose deadline of a second acts with `onTimeout`: their review ids. */
async function reviewsDueShortly(
  ctx: ServiceContext,
  name: string,
  n: number,
  onTimeout: "approve" | "skip",
) {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 1) {
    const at = await planAtFirstStep(ctx, `${name} ${i}`);
    const asked = await requestUserReview(ctx, {
      ...at,
      summary: name,
      deadlineSeconds: 1,
      onTimeout,
    });
    ids.push(asked.reviewRequestId);
  }
  return ids;
}

/** A review with ten minutes to its deadline, and `n` copies of it due soon: all their ids. */
async function manyDueSoon(ctx: ServiceContext, db: DatabaseHandle["db"], n: number) {
  const at = await planAtFirstStep(ctx, "Due soon, many");
  const asked = await requestUserReview(ctx, {
    ...at,
    summary: "Many soon.",
    deadlineSeconds: 600,
    onTimeout: "approve",
  });
  return { asked: asked.reviewRequestId, ids: await dueSoonCopies(db, asked.reviewRequestId, n) };
}

/** Withdraws the reviews a test made, so the later tests' runs find none of them due. */
async function withdraw(db: DatabaseHandle["db"], ids: string[]) {
  for (const id of ids) {
    await db.execute(sql`update review_request set status = 'withdrawn' where id = ${id}::uuid`);
  }
}

/** How many `review.due_soon` events each of `ids` has: one each when every review was queued once. */
async function dueSoonCounts(db: DatabaseHandle["db"], ids: string[]) {
  const rows = await readRows<{ n: number }>(
    db,
    sql`select count(e.id)::int as n
      from unnest(${arrayParam(ids)}::uuid[]) as ids(id)
        left join notification_event e on e.event = 'review.due_soon'
          and e.payload->>'reviewRequestId' = ids.id::text
      group by ids.id`,
  );
  return rows.map((row) => row.n);
}

/** The review once the scheduler, run until then, has escalated it. */
async function escalatedByScheduler(db: DatabaseHandle["db"], reviewRequestId: string) {
  await expect
    .poll(async () => {
      await runReviewScheduler(db, SCHEDULER_SETTINGS);
      return (await reviewRow(db, reviewRequestId)).escalatedAt;
    }, POLL)
    .not.toBeNull();
  return reviewRow(db, reviewRequestId);
}

describe.each(BACKENDS)("review deadlines on %s", (backend) => {
  let handle: DatabaseHandle;
  let team: Team;

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    team = await seedTeam(handle.db, `deadlines-${backend}`);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it.each([
    ["approve", "completed", "executing"],
    ["skip", "skipped", "executing"],
    ["reject", "failed", "failed"],
  ] as const)(
    "applies onTimeout %s as a decision by Cairn (deadline)",
    async (action, stepStatus, planStatus) => {
      const { ctx } = team;
      const { planId, stepId } = await planAtFirstStep(ctx, `Timeout ${action}`);
      const asked = await requestUserReview(ctx, {
        planId,
        stepId,
        summary: "Check the sources.",
        deadlineSeconds: 1,
        onTimeout: action,
      });
      expect(asked).toMatchObject({ onTimeout: action, assignedUserId: null, assignedRole: null });
      await expect
        .poll(async () => {
          await runReviewScheduler(handle.db, SCHEDULER_SETTINGS);
          return (await reviewRow(handle.db, asked.reviewRequestId)).status;
        }, POLL)
        .toBe("decided");

      const [decision] = await handle.db
        .select()
        .from(reviewDecisions)
        .where(eq(reviewDecisions.reviewRequestId, asked.reviewRequestId));
      expect(decision).toMatchObject({
        decision: action,
        decidedByType: "system",
        decidedById: null,
        decidedByLabel: "Cairn (deadline)",
      });
      expect(decision?.feedback).toContain("No reviewer answered by the deadline");
      const audit = await handle.db
        .select()
        .from(planAuditLog)
        .where(and(eq(planAuditLog.planId, planId), eq(planAuditLog.eventType, "user_reviewed")));
      const decided = audit.find((row) => row.payload.action === "decision");
      expect(decided).toMatchObject({
        actorType: "system",
        actorId: null,
        actorLabel: "Cairn (deadline)",
      });
      expect(decided?.payload).toMatchObject({ decision: action });

      const next = await getNextStep(ctx, { planId });
      expect(next.reviewTimedOut).toMatchObject({
        reviewRequestId: asked.reviewRequestId,
        stepId,
        action,
      });
      expect(next.reviewTimedOut?.reason).toContain(`onTimeout: ${action}`);
      if (planStatus === "failed") expect(next.status).toBe("plan_failed");
      else expect(next).toMatchObject({ status: "ready", step: { stepOrder: 2 } });
      const [step] = await readRows<{ status: string }>(
        handle.db,
        sql`select status from plan_step where id = ${stepId}::uuid`,
      );
      expect(step?.status).toBe(stepStatus);

      const queued = await events(handle.db, asked.reviewRequestId);
      // The poll may also have run in the deadline's last 20%, which queues review.due_soon.
      const count = (event: string) => queued.filter((row) => row.event === event).length;
      expect([count("review.requested"), count("review.timed_out")]).toEqual([1, 1]);
      expect(count("review.due_soon")).toBeLessThanOrEqual(1);
      expect(queued.find((row) => row.event === "review.timed_out")?.payload).toMatchObject({
        reviewRequestId: asked.reviewRequestId,
        planId,
        planTitle: `Timeout ${action}`,
        stepId,
        stepOrder: 1,
        onTimeout: action,
        action,
      });
      // A second run finds nothing: the review was applied once.
      expect(await applyDueReviews(handle.db, SCHEDULER_SETTINGS)).toBe(0);
    },
  );

  it("escalates to the admins without deciding, once", async () => {
    const { ctx, researcherId } = team;
    const { planId, stepId } = await planAtFirstStep(ctx, "Escalate");
    const asked = await requestUserReview(ctx, {
      planId,
      stepId,
      summary: "Needs a senior look.",
      deadlineSeconds: 1,
      onTimeout: "escalate",
      assignTo: `ada@deadlines-${backend}.example.com`,
    });
    expect(asked.assignedUserId).toBe(researcherId);
    expect(await escalatedByScheduler(handle.db, asked.reviewRequestId)).toMatchObject({
      status: "pending",
      assignedRole: "admin",
      assignedUserId: null,
    });
    expect(await runReviewScheduler(handle.db, SCHEDULER_SETTINGS)).toMatchObject({ applied: 0 });
    const escalated = (
      await handle.db.select().from(planAuditLog).where(eq(planAuditLog.planId, planId))
    ).filter((row) => row.payload.action === "review_escalated");
    expect(escalated).toHaveLength(1);
    expect(escalated[0]).toMatchObject({ actorType: "system", actorLabel: "Cairn (deadline)" });
    const timedOut = (await events(handle.db, asked.reviewRequestId)).filter(
      (row) => row.event === "review.timed_out",
    );
    expect(timedOut).toHaveLength(1);
    expect(timedOut[0]?.payload).toMatchObject({ action: "escalate", assignedRole: "admin" });

    const next = await getNextStep(ctx, { planId });
    expect(next.status).toBe("awaiting_review");
    // The agent reads why, as the trail's row says it.
    expect(next.reviewTimedOut).toMatchObject({
      action: "escalate",
      reason: escalated[0]?.payload.reason,
    });
    expect(next.reviewTimedOut?.reason).toContain("the admins");
    if (next.status === "awaiting_review") expect(next.review?.escalatedAt).toBeDefined();

    // What the loop's reads carry of it comes from the review, not from the
    // plan's trail, which grows with every call on the plan: no row of the
    // trail is read, however long it is.
    // And whether a review is due is asked of the plan's pending reviews
    // alone, not of every review the plan has had. With statistics, as a
    // database in use has them: without, the team's pending reviews' index
    // costs the same.
    await handle.db.execute(sql`analyze review_request`);
    const plan = await genericPlan(
      handle.db,
      `select ${deadlineStateColumns("$1::uuid", "$2::uuid")}`,
      [planId, ctx.tenantId],
      { seqScans: false },
    );
    expect(plan).toContain("review_request_plan_pending_idx");
    expect(plan).not.toContain("plan_audit_log");
  });

  it("hands the review to the admins when a checkpoint nobody has decided holds the deadline's approve", async () => {
    const { ctx } = team;
    const { planId, stepId: first } = await planAtFirstStep(ctx, "Approve behind a checkpoint");
    await submitStepResult(ctx, plainResult(planId, first));
    const next = await getNextStep(ctx, { planId });
    if (next.status !== "ready") throw new Error(`expected step 2, got ${next.status}`);
    const stepId = next.step.stepId;
    const asked = await requestUserReview(ctx, {
      planId,
      stepId,
      summary: "Approve unless someone objects.",
      deadlineSeconds: 1,
      onTimeout: "approve",
    });
    // The state a review asked before request_user_review refused a step
    // behind a checkpoint is left in (a checkpoint added ahead of the step after
    // its hand-out; no call makes it now): step 1 a checkpoint nobody has decided.
    await handle.db.execute(
      sql`update plan_step set step_type = 'checkpoint', status = 'pending' where id = ${first}::uuid`,
    );
    expect(await escalatedByScheduler(handle.db, asked.reviewRequestId)).toMatchObject({
      status: "pending",
      assignedRole: "admin",
      onTimeout: "escalate",
      onTimeoutReplaced: "approve",
    });
    const [step] = await readRows<{ status: string }>(
      handle.db,
      sql`select status from plan_step where id = ${stepId}::uuid`,
    );
    expect(step?.status).toBe("awaiting_input");
    const trail = (
      await handle.db.select().from(planAuditLog).where(eq(planAuditLog.planId, planId))
    ).map((row) => row.payload);
    expect(trail.filter((p) => p.action === "deadline_action_replaced")).toEqual([
      expect.objectContaining({
        from: "approve",
        to: "escalate",
        reason: expect.stringMatching(
          /^The deadline's "approve" cannot go: step 1, a checkpoint nobody has decided yet, now stands before this step/,
        ),
      }),
    ]);
    const why = /cannot go: step 1, a checkpoint nobody has decided yet/;
    expect(trail.filter((p) => p.action === "review_escalated")).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(why) }),
    ]);
    expect(trail.some((p) => p.action === "decision")).toBe(false);
    // Fired once: the review is no longer due, so no run tries it again.
    const [due] = await readRows<{ due: boolean }>(
      handle.db,
      sql`select exists (select 1 from review_request r
        where r.id = ${asked.reviewRequestId}::uuid and ${dueWhere}) as due`,
    );
    expect(due?.due).toBe(false);
    const timedOut = (await events(handle.db, asked.reviewRequestId)).filter(
      (row) => row.event === "review.timed_out",
    );
    expect(timedOut.map((row) => row.payload)).toEqual([
      expect.objectContaining({ action: "escalate", reason: expect.stringMatching(why) }),
    ]);
    const after = await getNextStep(ctx, { planId });
    expect(after.reviewTimedOut).toMatchObject({
      reviewRequestId: asked.reviewRequestId,
      action: "escalate",
      reason: expect.stringMatching(why),
    });
  });

  it("skips by itself on get_next_step when no scheduler runs (the acceptance scenario)", async () => {
    const { ctx } = team;
    const { planId, stepId } = await planAtFirstStep(ctx, "Acceptance");
    await requestUserReview(ctx, {
      planId,
      stepId,
      summary: "Nobody will answer this.",
      deadlineSeconds: 1,
      onTimeout: "skip",
    });
    expect((await getNextStep(ctx, { planId })).status).toBe("awaiting_review");
    let next = await getNextStep(ctx, { planId });
    await expect
      .poll(async () => {
        next = await getNextStep(ctx, { planId });
        return next.status;
      }, POLL)
      .toBe("ready");
    expect(next).toMatchObject({ step: { stepOrder: 2 } });
    expect(next.reviewTimedOut).toMatchObject({ action: "skip", stepId });
    expect(next.reviewTimedOut?.reason).toContain("Cairn skipped the step");
  });

  it("applies due reviews before get_plan_status and the inbox read them", async () => {
    const { ctx } = team;
    const viaStatus = await planAtFirstStep(ctx, "Via status");
    await requestUserReview(ctx, {
      ...viaStatus,
      summary: "Status.",
      deadlineSeconds: 1,
      onTimeout: "approve",
    });
    await expect
      .poll(async () => (await getPlanStatus(ctx, { planId: viaStatus.planId })).status, POLL)
      .toBe("executing");
    const viaInbox = await planAtFirstStep(ctx, "Via inbox");
    const asked = await requestUserReview(ctx, {
      ...viaInbox,
      summary: "Inbox.",
      deadlineSeconds: 1,
      onTimeout: "skip",
    });
    await expect
      .poll(async () => {
        await settleDeadlinesOfTenant(ctx);
        return (await reviewRow(handle.db, asked.reviewRequestId)).status;
      }, POLL)
      .toBe("decided");
  });

  it("queues review.due_soon once, before the deadline", async () => {
    const { ctx } = team;
    const { planId, stepId } = await planAtFirstStep(ctx, "Due soon");
    const asked = await requestUserReview(ctx, {
      planId,
      stepId,
      summary: "Soon.",
      deadlineSeconds: 600,
      onTimeout: "approve",
    });
    expect(await queueDueSoonReviews(handle.db)).toBe(0);
    // Nine of its ten minutes have passed: within the last 20% (2 minutes).
    await handle.db.execute(
      sql`update review_request set created_at = now() - interval '540 seconds',
        due_at = now() + interval '60 seconds' where id = ${asked.reviewRequestId}::uuid`,
    );
    expect(await queueDueSoonReviews(handle.db)).toBe(1);
    expect(await queueDueSoonReviews(handle.db)).toBe(0);
    const dueSoon = (await events(handle.db, asked.reviewRequestId)).filter(
      (row) => row.event === "review.due_soon",
    );
    expect(dueSoon).toHaveLength(1);
    expect((await reviewRow(handle.db, asked.reviewRequestId)).status).toBe("pending");
  });

  it("queues due-soon notices a batch per transaction, each review once", async () => {
    const { asked, ids } = await manyDueSoon(team.ctx, handle.db, 2 * DUE_SOON_BATCH + 5);
    try {
      expect(await queueDueSoonReviews(handle.db)).toBe(ids.length);
      expect(await queueDueSoonReviews(handle.db)).toBe(0);
      expect(new Set(await dueSoonCounts(handle.db, ids))).toEqual(new Set([1]));
      // Each transaction stamps its own now(): one stamp per batch, none larger than a batch.
      const batches = await readRows<{ n: number }>(
        handle.db,
        sql`select count(*)::int as n from review_request
          where id = any(${arrayParam(ids)}::uuid[]) group by due_soon_notified_at`,
      );
      expect(batches.map((batch) => batch.n).sort((a, b) => b - a)).toEqual([
        DUE_SOON_BATCH,
        DUE_SOON_BATCH,
        5,
      ]);
    } finally {
      await withdraw(handle.db, [asked, ...ids]);
    }
  });

  it("the inbox applies a few due reviews in its request and lists none of the rest", async () => {
    const other = await seedTeam(handle.db, `inbox-settles-${backend}`);
    const ids = await reviewsDueShortly(other.ctx, "Settle", INBOX_SETTLES + 2, "skip");
    const due = () =>
      readRows<{ n: number }>(
        handle.db,
        sql`select count(*)::int as n from review_request
          where id = any(${arrayParam(ids)}::uuid[]) and status = 'pending' and due_at <= now()`,
      );
    await expect.poll(async () => (await due())[0]?.n, POLL).toBe(ids.length);
    const admin: ServiceContext = {
      ...other.ctx,
      actor: { type: "user", id: other.adminId, label: "Admin" },
    };
    await settleDeadlinesOfTenant(admin);
    expect((await due())[0]?.n).toBe(2);
    // The two still due are past their deadline: not listed as waiting for a decision.
    const inbox = await listInbox(admin, { role: "admin" });
    expect(inbox.reviews).toEqual([]);
    // Nor counted by the navigation's inbox badge.
    expect(await countAwaitingReview(admin)).toBe(0);
    expect(inbox.total).toBe(0);
    // The scheduler applies the rest.
    expect(
      await applyDueReviews(handle.db, SCHEDULER_SETTINGS, { tenantId: other.ctx.tenantId }),
    ).toBe(2);
    expect((await due())[0]?.n).toBe(0);
    const decided = await readRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from review_decision
        where review_request_id = any(${arrayParam(ids)}::uuid[])`,
    );
    expect(decided[0]?.n).toBe(ids.length);
  });

  it("takes the team's default deadline, and rejects bad deadlines and unknown assignees", async () => {
    const { ctx } = team;
    await handle.db
      .update(tenants)
      .set({ reviewDeadlineSeconds: 3600, reviewOnTimeout: "escalate" })
      .where(eq(tenants.id, ctx.tenantId));
    try {
      const { planId, stepId } = await planAtFirstStep(ctx, "Defaults");
      const bad = [
        { assignTo: "nobody@example.com" },
        { onTimeout: "skip" as const, deadlineSeconds: 10, deadlineAt: "2099-01-01T00:00:00Z" },
        { deadlineAt: "2000-01-01T00:00:00Z", onTimeout: "skip" as const },
        { deadlineSeconds: 0, onTimeout: "skip" as const },
      ];
      for (const extra of bad) {
        await expect(
          requestUserReview(ctx, { planId, stepId, summary: "x", ...extra }),
        ).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
      }
      const asked = await requestUserReview(ctx, {
        planId,
        stepId,
        summary: "Team default.",
        assignTo: { role: "admin" },
      });
      expect(asked).toMatchObject({ onTimeout: "escalate", assignedRole: "admin" });
      expect(Date.parse(asked.dueAt ?? "") - Date.now()).toBeGreaterThan(3500_000);
    } finally {
      await handle.db
        .update(tenants)
        .set({ reviewDeadlineSeconds: null, reviewOnTimeout: null })
        .where(eq(tenants.id, ctx.tenantId));
    }
  });

  it("lists pending reviews oldest first; take, hand off and filter by assignee", async () => {
    const { ctx, adminId, researcherId } = team;
    const first = await planAtFirstStep(ctx, "Inbox one");
    const one = await requestUserReview(ctx, {
      ...first,
      summary: "One.",
      assignTo: `ADA@deadlines-${backend}.example.com`,
    });
    const second = await planAtFirstStep(ctx, "Inbox two");
    const two = await requestUserReview(ctx, { ...second, summary: "Two.", questions: ["Why?"] });
    const viewer = (userId: string): ServiceContext => ({
      ...ctx,
      actor: { type: "user", id: userId, label: userId },
    });
    const ids = (page: { reviews: { reviewRequestId: string }[] }) =>
      page.reviews
        .map((r) => r.reviewRequestId)
        .filter((id) => [one, two].some((x) => x.reviewRequestId === id));

    const all = await listInbox(viewer(adminId), { role: "admin" });
    expect(ids(all)).toEqual([one.reviewRequestId, two.reviewRequestId]);
    expect(all.reviews.find((r) => r.reviewRequestId === two.reviewRequestId)).toMatchObject({
      planName: "Inbox two",
      stepOrder: 1,
      questions: ["Why?"],
      assignedUserId: null,
    });
    expect(ids(await listInbox(viewer(researcherId), { role: "researcher", mine: true }))).toEqual([
      one.reviewRequestId,
    ]);
    expect(ids(await listInbox(viewer(adminId), { role: "admin", planId: second.planId }))).toEqual(
      [two.reviewRequestId],
    );
    expect(ids(await listInbox(viewer(adminId), { role: "admin", age: "1h" }))).toEqual([]);

    const researcher: ServiceContext = {
      ...ctx,
      actor: { type: "user", id: researcherId, label: "Ada" },
    };
    await assignReview(researcher, { reviewRequestId: two.reviewRequestId, userId: researcherId });
    expect(ids(await listInbox(viewer(researcherId), { role: "researcher", mine: true }))).toEqual([
      one.reviewRequestId,
      two.reviewRequestId,
    ]);
    await assignReview(researcher, { reviewRequestId: two.reviewRequestId, userId: null });
    expect(ids(await listInbox(viewer(researcherId), { role: "researcher", mine: true }))).toEqual([
      one.reviewRequestId,
    ]);
    await expect(
      assignReview(researcher, {
        reviewRequestId: two.reviewRequestId,
        userId: "00000000-0000-4000-8000-000000000000",
      }),
    ).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    const assigned = (
      await handle.db
        .select()
        .from(planAuditLog)
        .where(eq(planAuditLog.planId, second.planId))
        // The order they were written in: the test compares the sequence of assignments.
        .orderBy(planAuditLog.seq)
    ).filter((row) => row.payload.action === "review_assigned");
    expect(assigned.map((row) => row.payload.assignedUserId)).toEqual([researcherId, null]);
    expect(assigned[0]).toMatchObject({ actorType: "user", actorLabel: "Ada" });

    // Anyone may answer a review assigned to someone else; a decided one can no longer move.
    await submitUserDecision(
      { ...ctx, actor: { type: "user", id: adminId, label: "Admin" } },
      { planId: first.planId, reviewRequestId: one.reviewRequestId, decision: "approve" },
    );
    await expect(
      assignReview(researcher, { reviewRequestId: one.reviewRequestId, userId: null }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    expect(ids(await listInbox(viewer(adminId), { role: "admin" }))).toEqual([two.reviewRequestId]);
  });

  it("passes by a review whose action fails, and applies the ones due after it", async () => {
    const { ctx } = team;
    const broken = await planAtFirstStep(ctx, "Broken");
    const first = await requestUserReview(ctx, {
      ...broken,
      summary: "Broken.",
      deadlineSeconds: 1,
      onTimeout: "approve",
    });
    const fine = await planAtFirstStep(ctx, "Fine");
    const second = await requestUserReview(ctx, {
      ...fine,
      summary: "Fine.",
      deadlineSeconds: 1,
      onTimeout: "approve",
    });
    // A plan no longer waiting for its pending review: the decision is a CONFLICT.
    await handle.db.execute(
      sql`update research_plan set status = 'executing' where id = ${broken.planId}::uuid`,
    );
    try {
      await expect
        .poll(async () => {
          await applyDueReviews(handle.db, SCHEDULER_SETTINGS);
          return (await reviewRow(handle.db, second.reviewRequestId)).status;
        }, POLL)
        .toBe("decided");
      expect((await reviewRow(handle.db, first.reviewRequestId)).status).toBe("pending");
    } finally {
      await handle.db.execute(
        sql`update review_request set status = 'withdrawn' where id = ${first.reviewRequestId}::uuid`,
      );
    }
  });

  it("applies a review that fell due while no instance ran, at start", async () => {
    const { ctx } = team;
    const { planId, stepId } = await planAtFirstStep(ctx, "Restart");
    const asked = await requestUserReview(ctx, {
      planId,
      stepId,
      summary: "Due during the outage.",
      deadlineSeconds: 1,
      onTimeout: "approve",
    });
    await expect
      .poll(
        async () =>
          (
            await readRows<{ due: boolean }>(
              handle.db,
              sql`select due_at <= now() as due from review_request where id = ${asked.reviewRequestId}::uuid`,
            )
          )[0]?.due,
        POLL,
      )
      .toBe(true);
    // An hour between ticks: only the tick at start can apply it.
    const housekeeping = vi.fn(async () => undefined);
    const stop = startReviewScheduler(
      async () => handle.db,
      SCHEDULER_SETTINGS,
      3_600_000,
      housekeeping,
    );
    try {
      await expect
        .poll(async () => (await reviewRow(handle.db, asked.reviewRequestId)).status, POLL)
        .toBe("decided");
      // The same tick does the housekeeping (lib/startup.ts: unused OAuth clients).
      await expect.poll(() => housekeeping.mock.calls.length, POLL).toBe(1);
      expect(housekeeping).toHaveBeenCalledWith(handle.db);
    } finally {
      stop();
    }
  });
});

describe("two instances and one due review on postgres", () => {
  const pools = useTwoPools();
  let team: Team;

  beforeAll(async () => {
    team = await seedTeam(pools.first.db, "two-instances");
  });

  it("applies each due review exactly once while four schedulers race", async () => {
    const count = 6;
    const asked = [];
    for (let i = 0; i < count; i += 1) {
      const { planId, stepId } = await planAtFirstStep(team.ctx, `Race ${i}`);
      asked.push(
        await requestUserReview(team.ctx, {
          planId,
          stepId,
          summary: "Race.",
          deadlineSeconds: 1,
          onTimeout: "skip",
        }),
      );
    }
    await expect
      .poll(
        async () =>
          (
            await readRows<{ n: number }>(
              pools.first.db,
              sql`select count(*)::int as n from review_request where status = 'pending' and due_at <= now()`,
            )
          )[0]?.n,
        POLL,
      )
      .toBe(count);
    expect(await raceFour(pools, (db) => applyDueReviews(db, SCHEDULER_SETTINGS))).toBe(count);
    const ids = asked.map((a) => a.reviewRequestId);
    const decisions = (await pools.first.db.select().from(reviewDecisions)).filter((d) =>
      ids.includes(d.reviewRequestId),
    );
    expect(decisions).toHaveLength(count);
    const timedOut = (await pools.first.db.select().from(notificationEvents)).filter(
      (row) => row.event === "review.timed_out",
    );
    expect(timedOut).toHaveLength(count);
    const decidedRows = (await pools.first.db.select().from(planAuditLog)).filter(
      (row) => row.actorLabel === "Cairn (deadline)" && row.payload.action === "decision",
    );
    expect(decidedRows).toHaveLength(count);
  });

  it("queues more due-soon reviews than a batch once each while four schedulers race", async () => {
    const { asked, ids } = await manyDueSoon(team.ctx, pools.first.db, 3 * DUE_SOON_BATCH + 7);
    try {
      expect(await raceFour(pools, queueDueSoonReviews)).toBe(ids.length);
      expect(await queueDueSoonReviews(pools.first.db)).toBe(0);
      expect(new Set(await dueSoonCounts(pools.first.db, ids))).toEqual(new Set([1]));
    } finally {
      await withdraw(pools.first.db, [asked, ...ids]);
    }
  });

  it("applies more due reviews than the inbox settles, all of one deadline, exactly once while it and four schedulers race", async () => {
    const count = INBOX_SETTLES + 5;
    const ids = await reviewsDueShortly(team.ctx, "Race more", count, "approve");
    const inIds = sql`review_request_id = any(${arrayParam(ids)}::uuid[])`;
    // All due at one instant: the runs' claims are ordered by id within it.
    await pools.first.db.execute(
      sql`update review_request set due_at = date_trunc('second', now()) - interval '1 second'
        where id = any(${arrayParam(ids)}::uuid[])`,
    );
    const admin: ServiceContext = {
      ...team.ctx,
      db: pools.second.db,
      actor: { type: "user", id: team.adminId, label: "Admin" },
    };
    const [, ...runs] = await Promise.all([
      settleDeadlinesOfTenant(admin),
      applyDueReviews(pools.first.db, SCHEDULER_SETTINGS),
      applyDueReviews(pools.second.db, SCHEDULER_SETTINGS),
      applyDueReviews(pools.first.db, SCHEDULER_SETTINGS),
      applyDueReviews(pools.second.db, SCHEDULER_SETTINGS),
    ]);
    // The inbox applied at most INBOX_SETTLES of them, the schedulers the rest.
    expect(runs.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(count - INBOX_SETTLES);
    const counted = (table: string) =>
      readRows<{ n: number; reviews: number }>(
        pools.first.db,
        sql`select count(*)::int as n, count(distinct review_request_id)::int as reviews
          from ${sql.raw(table)} where ${inIds}`,
      );
    expect((await counted("review_decision"))[0]).toEqual({ n: count, reviews: count });
    const timedOut = await readRows<{ n: number }>(
      pools.first.db,
      sql`select count(*)::int as n from notification_event where event = 'review.timed_out'
        and payload->>'reviewRequestId' = any(${arrayParam(ids)}::text[])`,
    );
    expect(timedOut[0]?.n).toBe(count);
  });
});
