/**
 * Quorum (docs/reviews.md, "Quorum"): a review that needs two approvals waits
 * after one person's, ignores that person's second click, passes on a second
 * person's, and its trail shows both; any one reject decides at once; an
 * approval of content that changed since does not count; under people_only a
 * relayed approval counts for nobody; the team's rule is a floor a plan or a
 * request may raise, never lower. In process, on PGlite and on PostgreSQL 15.
 */
import { and, eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { planAuditLog, reviewApprovals, teamAuditLog } from "@/lib/db/schema";
import { createUser } from "@/lib/services/accounts/create-user";
import { submitUserDecision } from "@/lib/services/plans/submit-user-decision";
import { setDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import { setReviewQuorum, teamReviewQuorum } from "@/lib/services/reviews/review-quorum";
import type { ServiceContext } from "@/lib/services/shared/context";
import { BACKENDS } from "../support/databases";
import { planSteps, signedInAdmin, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("review quorum on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const people = {} as { admin: ServiceContext; ada: ServiceContext };

  beforeAll(async () => {
    const ada = await createUser(tenant.handle.db, {
      email: "ada@example.com",
      password: "a long enough password",
      role: "researcher",
      tenant: "Alpha",
    });
    people.admin = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
    people.ada = {
      ...tenant.agent.ctx,
      actor: { type: "user", id: ada.userId, label: "Ada <ada@example.com>" },
    };
  });

  /** A plan whose checkpoint waits for a review; `extra` goes to request_user_review. */
  async function pendingReview(extra: Record<string, unknown> = {}, plan = {}) {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Quorum",
      researchQuestion: "q",
      steps: planSteps("checkpoint", "synthesize"),
      ...plan,
    });
    const next = await tenant.agent.ok("get_next_step", { planId: created.planId });
    const review = await tenant.agent.ok("request_user_review", {
      planId: created.planId,
      stepId: next.step.stepId,
      summary: "Please check.",
      ...extra,
    });
    return {
      planId: created.planId as string,
      stepId: next.step.stepId as string,
      reviewRequestId: review.reviewRequestId as string,
      approvalsRequired: review.approvalsRequired,
    };
  }

  const approve = (
    who: ServiceContext,
    review: { planId: string; reviewRequestId: string },
    contentDigest?: string,
  ) =>
    submitUserDecision(who, {
      planId: review.planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
      ...(contentDigest ? { contentDigest } : {}),
    });

  async function trail(planId: string) {
    const rows = await tenant.handle.db
      .select()
      .from(planAuditLog)
      .where(and(eq(planAuditLog.planId, planId), eq(planAuditLog.eventType, "user_reviewed")))
      .orderBy(planAuditLog.seq);
    return rows.map((row) => ({
      label: row.actorLabel,
      action: row.payload.action,
      ...row.payload,
    }));
  }

  it("waits after one approval, ignores its second click, passes on a second person's, with both on the trail", async () => {
    const review = await pendingReview({ approvalsRequired: 2 });
    expect(review.approvalsRequired).toBe(2);

    const first = await approve(people.admin, review);
    expect(first).toMatchObject({
      stepStatus: "awaiting_input",
      planStatus: "awaiting_review",
      approvals: { count: 1, required: 2, approvedBy: ["Alpha Admin <alpha@example.com>"] },
    });
    const waiting = await tenant.agent.ok("get_next_step", { planId: review.planId });
    expect(waiting.status).toBe("awaiting_review");
    expect(waiting.review?.approvals).toEqual({
      count: 1,
      required: 2,
      approvedBy: ["Alpha Admin <alpha@example.com>"],
    });

    const again = await approve(people.admin, review);
    expect(again).toMatchObject({ planStatus: "awaiting_review", approvals: { count: 1 } });
    expect(again.hint).toContain("already counts");

    const second = await approve(people.ada, review);
    expect(second).toMatchObject({
      stepStatus: "completed",
      planStatus: "executing",
      approvals: {
        count: 2,
        required: 2,
        approvedBy: ["Alpha Admin <alpha@example.com>", "Ada <ada@example.com>"],
      },
    });

    const rows = await trail(review.planId);
    expect(rows.map((row) => [row.action, row.label])).toEqual([
      ["review_requested", expect.any(String)],
      ["approval_recorded", "Alpha Admin <alpha@example.com>"],
      ["decision", "Ada <ada@example.com>"],
    ]);
    expect(rows[1]).toMatchObject({ approvals: 1, approvalsRequired: 2, channel: "web" });
    expect(rows[2]).toMatchObject({
      decision: "approve",
      approvedBy: ["Alpha Admin <alpha@example.com>", "Ada <ada@example.com>"],
    });
    // Each approval is bound to the content it approved.
    const kept = await tenant.handle.db
      .select()
      .from(reviewApprovals)
      .where(eq(reviewApprovals.reviewRequestId, review.reviewRequestId));
    expect(kept).toHaveLength(2);
    expect(new Set(kept.map((row) => row.reviewDigest)).size).toBe(1);
  });

  it("decides at once on any one person's reject, modify or skip", async () => {
    const review = await pendingReview({ approvalsRequired: 2 });
    await approve(people.admin, review);
    const rejected = await submitUserDecision(people.ada, {
      planId: review.planId,
      reviewRequestId: review.reviewRequestId,
      decision: "reject",
      feedback: "No.",
    });
    expect(rejected).toMatchObject({ stepStatus: "failed", planStatus: "failed" });
  });

  it("does not count an approval of content that has changed since", async () => {
    const review = await pendingReview({ approvalsRequired: 2 });
    await approve(people.admin, review);
    await tenant.handle.db.execute(
      sql`update plan_step set instructions = 'Look somewhere else.' where id = ${review.stepId}::uuid`,
    );
    // Ada approves what the review shows now (the page sends its digest): the
    // admin's approval was of the old content.
    const card = await tenant.agent.ok("read_review_card", { planId: review.planId });
    const digest = card.review?.contentDigest;
    // The card shows only what still counts: the admin approved the old content.
    expect(card.review?.approvals).toEqual({ count: 0, required: 2, approvedBy: [] });
    const ada = await approve(people.ada, review, digest);
    expect(ada).toMatchObject({
      planStatus: "awaiting_review",
      approvals: { count: 1, approvedBy: ["Ada <ada@example.com>"] },
    });
    // The admin approving the new content counts again, and passes it.
    const admin = await approve(people.admin, review, digest);
    expect(admin).toMatchObject({ stepStatus: "completed", approvals: { count: 2 } });
  });

  it("counts no relayed approval under people_only", async () => {
    const review = await pendingReview({ approvalsRequired: 2 });
    // Relayed while agents may relay: it counts then.
    const relayed = await tenant.agent.ok("submit_user_decision", {
      planId: review.planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
    expect(relayed).toMatchObject({ channel: "relayed", approvals: { count: 1 } });
    await setDecisionPolicy(people.admin, { decisionPolicy: "people_only" });
    try {
      // The relay no longer counts: one person's approval leaves the review waiting.
      const admin = await approve(people.admin, review);
      expect(admin).toMatchObject({
        planStatus: "awaiting_review",
        approvals: { count: 1, approvedBy: ["Alpha Admin <alpha@example.com>"] },
      });
      expect(
        await tenant.agent.fails("submit_user_decision", {
          planId: review.planId,
          reviewRequestId: review.reviewRequestId,
          decision: "approve",
        }),
      ).toContain("only people decide");
      const ada = await approve(people.ada, review);
      expect(ada).toMatchObject({ stepStatus: "completed", approvals: { count: 2 } });
    } finally {
      await setDecisionPolicy(people.admin, { decisionPolicy: "people_and_agents" });
    }
  });

  it("takes the team's rule as a floor: a plan or a request may ask for more, never fewer", async () => {
    expect(await setReviewQuorum(people.admin, { approvalsRequired: 2 })).toBe(2);
    try {
      expect((await pendingReview()).approvalsRequired).toBe(2);
      expect((await pendingReview({ approvalsRequired: 3 })).approvalsRequired).toBe(3);
      expect((await pendingReview({}, { approvalsRequired: 3 })).approvalsRequired).toBe(3);
      const created = await tenant.agent.ok("create_research_plan", {
        name: "Too few",
        researchQuestion: "q",
        steps: planSteps("checkpoint"),
      });
      const next = await tenant.agent.ok("get_next_step", { planId: created.planId });
      const refused = await tenant.agent.fails("request_user_review", {
        planId: created.planId,
        stepId: next.step.stepId,
        summary: "One is enough?",
        approvalsRequired: 1,
      });
      expect(refused).toContain("need at least 2");
      // Nothing was stored: the step is still the agent's.
      expect((await tenant.agent.ok("get_plan_status", { planId: created.planId })).status).toBe(
        "executing",
      );
      expect(
        await tenant.agent.fails("create_research_plan", {
          name: "Too few",
          researchQuestion: "q",
          steps: planSteps("checkpoint"),
          approvalsRequired: 1,
        }),
      ).toContain("need at least 2");
    } finally {
      await setReviewQuorum(people.admin, { approvalsRequired: 1 });
    }
  });

  it("is set with the CLI too, each change on the team's trail", async () => {
    expect(await teamReviewQuorum(tenant.handle.db, "Alpha")).toBe(1);
    expect(await teamReviewQuorum(tenant.handle.db, "Alpha", 3)).toBe(3);
    await expect(teamReviewQuorum(tenant.handle.db, "Alpha", 11)).rejects.toThrow(
      /approvalsRequired/,
    );
    expect(await teamReviewQuorum(tenant.handle.db, "Alpha", 1)).toBe(1);
    const rows = await tenant.handle.db
      .select()
      .from(teamAuditLog)
      .where(eq(teamAuditLog.eventType, "review_quorum_changed"))
      .orderBy(teamAuditLog.createdAt);
    expect(rows.map((row) => [row.actorLabel, row.payload.from, row.payload.to])).toEqual([
      ["Alpha Admin <alpha@example.com>", 1, 2],
      ["Alpha Admin <alpha@example.com>", 2, 1],
      ["the admin CLI", 1, 3],
      ["the admin CLI", 3, 1],
    ]);
  });
});
