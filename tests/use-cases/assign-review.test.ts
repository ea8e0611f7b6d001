/**
 * Assigning a pending review (docs/reviews.md), the web's take, hand off and
 * back-to-the-team: each writes a review_assigned audit row; only an active
 * team member can be named; an answered review can no longer move. In
 * process, on PGlite and on PostgreSQL 15.
 */
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { notificationEvents, planAuditLog } from "@/lib/db/schema";
import { createUser } from "@/lib/services/accounts/create-user";
import { assignReview } from "@/lib/services/reviews/assign-review";
import type { ServiceContext } from "@/lib/services/shared/context";
import { BACKENDS } from "../support/databases";
import { planSteps, tenantContext, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("assign review on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const people = {} as { adminId: string; researcherId: string; researcher: ServiceContext };

  beforeAll(async () => {
    const researcher = await createUser(tenant.handle.db, {
      email: "ada@example.com",
      password: "a long enough password",
      role: "researcher",
      tenant: "Alpha",
    });
    const [admin] = await tenant.handle.db.query.users.findMany({
      where: (users, { eq: equals }) => equals(users.email, "alpha@example.com"),
    });
    people.adminId = admin?.id ?? "";
    people.researcherId = researcher.userId;
    people.researcher = {
      ...tenant.agent.ctx,
      actor: { type: "user", id: researcher.userId, label: "Ada" },
    };
  });

  /** A plan whose first step waits for a review nobody is assigned to. */
  async function pendingReview() {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Assign",
      researchQuestion: "q",
      steps: planSteps("checkpoint", "synthesize"),
    });
    const next = await tenant.agent.ok("get_next_step", { planId: created.planId });
    const review = await tenant.agent.ok("request_user_review", {
      planId: created.planId,
      stepId: next.step.stepId,
      summary: "Please check.",
    });
    return { planId: created.planId as string, reviewRequestId: review.reviewRequestId as string };
  }

  async function assignments(planId: string) {
    const rows = await tenant.handle.db
      .select()
      .from(planAuditLog)
      .where(eq(planAuditLog.planId, planId));
    return rows.filter((row) => row.payload.action === "review_assigned");
  }

  it("takes a review, hands it off and gives it back to the team, each in the audit trail", async () => {
    const { planId, reviewRequestId } = await pendingReview();
    const { researcher, researcherId, adminId } = people;
    expect(await assignReview(researcher, { reviewRequestId, userId: researcherId })).toEqual({
      reviewRequestId,
      assignedUserId: researcherId,
      assignedUserEmail: "ada@example.com",
      handedOver: false,
    });
    expect(await assignReview(researcher, { reviewRequestId, userId: adminId })).toMatchObject({
      assignedUserId: adminId,
      assignedUserEmail: "alpha@example.com",
    });
    expect(await assignReview(researcher, { reviewRequestId, userId: null })).toMatchObject({
      assignedUserId: null,
      assignedUserEmail: null,
    });
    const rows = await assignments(planId);
    expect(rows.map((row) => row.payload.assignedUserId)).toEqual([researcherId, adminId, null]);
    expect(rows[0]).toMatchObject({ actorType: "user", actorLabel: "Ada" });
    const context = await tenant.agent.ok("get_research_context", { planId });
    expect(context.reviews[0]).toMatchObject({ assignedUserId: null, status: "pending" });
  });

  it("hands a review over to a colleague with a note: the assignee changes, the colleague is notified, the trail says so", async () => {
    const { planId, reviewRequestId } = await pendingReview();
    const { researcher, adminId } = people;
    expect(
      await assignReview(researcher, {
        reviewRequestId,
        userId: adminId,
        note: "  You know this source best.  ",
      }),
    ).toEqual({
      reviewRequestId,
      assignedUserId: adminId,
      assignedUserEmail: "alpha@example.com",
      handedOver: true,
    });
    const [row] = await assignments(planId);
    expect(row).toMatchObject({
      actorLabel: "Ada",
      payload: { assignedUserId: adminId, handedOver: true, note: "You know this source best." },
    });
    const events = await tenant.handle.db
      .select()
      .from(notificationEvents)
      .where(eq(notificationEvents.event, "review.handed_over"));
    const sent = events.filter((event) => event.payload.reviewRequestId === reviewRequestId);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.payload).toMatchObject({
      assignedUserId: adminId,
      assignedUserEmail: "alpha@example.com",
      handedOverBy: "Ada",
      note: "You know this source best.",
    });
    // A note goes only with a hand-over: with a take it is refused, and nothing changes.
    await expect(
      assignReview(researcher, { reviewRequestId, userId: people.researcherId, note: "Mine." }),
    ).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    expect(await assignments(planId)).toHaveLength(1);
  });

  it("refuses someone who is not an active member of the team", async () => {
    const { planId, reviewRequestId } = await pendingReview();
    const beta = await tenantContext(tenant.handle.db, "Beta");
    const [betaAdmin] = await tenant.handle.db.query.users.findMany({
      where: (users, { eq: equals }) => equals(users.tenantId, beta.tenantId),
    });
    for (const userId of ["00000000-0000-4000-8000-000000000000", betaAdmin?.id ?? ""]) {
      await expect(
        assignReview(people.researcher, { reviewRequestId, userId }),
      ).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    }
    // Nor can another team see the review at all.
    await expect(assignReview(beta, { reviewRequestId, userId: null })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await assignments(planId)).toEqual([]);
  });

  it("answers CONFLICT once the review was decided, and changes nothing", async () => {
    const { planId, reviewRequestId } = await pendingReview();
    await tenant.agent.ok("submit_user_decision", { planId, reviewRequestId, decision: "approve" });
    await expect(
      assignReview(people.researcher, { reviewRequestId, userId: people.researcherId }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await assignments(planId)).toEqual([]);
  });
});
