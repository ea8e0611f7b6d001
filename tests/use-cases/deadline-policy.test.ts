/**
 * A deadline acts only as the policy in force lets it (docs/reviews.md,
 * "Deadlines under a policy switch"): an agent's approve set under
 * people_and_agents never passes a checkpoint after a switch to people_only,
 * whether the switch revisited the review or the firing finds the action
 * forbidden itself. On PGlite and on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { applyDueReviews } from "@/lib/services/reviews/deadline-actions";
import { setDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import { setReviewDefaults } from "@/lib/services/reviews/review-defaults";
import type { ServiceContext } from "@/lib/services/shared/context";
import { BACKENDS } from "../support/databases";
import { planSteps, signedInAdmin, useFreshTenant } from "../support/in-process";
import { readRows } from "../support/rows";

const SETTINGS = { stallThresholdSeconds: 1800 };

describe.each(BACKENDS)("deadlines under a policy switch on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const as = {} as { personCtx: ServiceContext };

  beforeAll(async () => {
    as.personCtx = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
  });

  /** Under people_and_agents: the agent's checkpoint up for review, approved by its deadline. */
  async function agentTimedApprove() {
    await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_and_agents" });
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Deadline",
      researchQuestion: "q",
      steps: planSteps("checkpoint", "synthesize"),
    });
    const handed = await tenant.agent.ok("get_next_step", { planId });
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: handed.step.stepId,
      summary: "Approve me in 2 s.",
      proposedResult: { mine: true },
      deadlineSeconds: 2,
      onTimeout: "approve",
    });
    expect(review.onTimeout).toBe("approve");
    return { planId, stepId: handed.step.stepId, reviewRequestId: review.reviewRequestId };
  }

  /** The deadline passes and the scheduler runs. */
  async function deadlinePasses(reviewRequestId: string) {
    await tenant.handle.db.execute(
      sql`update review_request set due_at = now() - interval '1 second'
        where id = ${reviewRequestId}::uuid`,
    );
    expect(await applyDueReviews(tenant.handle.db, SETTINGS)).toBe(1);
  }

  const reviewRow = (id: string) =>
    readRows<{
      status: string;
      onTimeout: string;
      replaced: string | null;
      role: string | null;
      stepStatus: string;
      result: unknown;
    }>(
      tenant.handle.db,
      sql`select r.status, r.on_timeout as "onTimeout", r.on_timeout_replaced as replaced,
          r.assigned_role as role, s.status as "stepStatus", s.result
        from review_request r join plan_step s on s.id = r.step_id where r.id = ${id}::uuid`,
    );

  const replacedRows = (planId: string) =>
    readRows<{ payload: Record<string, unknown>; actor: string }>(
      tenant.handle.db,
      sql`select payload, actor_label as actor from plan_audit_log
        where plan_id = ${planId}::uuid and payload->>'action' = 'deadline_action_replaced'`,
    );

  it("a switch to people_only replaces the agent's approve, says so on the team trail, and the deadline escalates", async () => {
    const { planId, reviewRequestId } = await agentTimedApprove();
    await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_only" });

    const [revisited] = await reviewRow(reviewRequestId);
    expect(revisited).toMatchObject({
      status: "pending",
      onTimeout: "escalate",
      replaced: "approve",
    });
    const [trail] = await readRows<{ payload: Record<string, unknown> }>(
      tenant.handle.db,
      sql`select payload from team_audit_log where tenant_id = ${tenant.agent.ctx.tenantId}::uuid
        and event_type = 'decision_policy_changed' order by created_at desc, id desc limit 1`,
    );
    expect(trail?.payload).toEqual({
      from: "people_and_agents",
      to: "people_only",
      pendingReviews: { pending: 1, replaced: [{ from: "approve", to: "escalate", reviews: 1 }] },
    });
    // The agent learns what will happen now.
    const waiting = await tenant.agent.ok("get_plan_status", { planId });
    expect(waiting.status).toBe("awaiting_review");

    await deadlinePasses(reviewRequestId);
    const [after] = await reviewRow(reviewRequestId);
    expect(after).toMatchObject({
      status: "pending",
      role: "admin",
      stepStatus: "awaiting_input",
      result: null,
    });
    const [replaced] = await replacedRows(planId);
    expect(replaced?.actor).toBe("Cairn (deadline)");
    expect(replaced?.payload).toMatchObject({
      reviewRequestId,
      from: "approve",
      to: "escalate",
      decisionPolicy: "people_only",
    });
    expect(replaced?.payload.reason).toMatch(
      /only people decide checkpoints .* "approve", set by an agent/,
    );
    const decisions = await readRows(
      tenant.handle.db,
      sql`select id from review_decision where review_request_id = ${reviewRequestId}::uuid`,
    );
    expect(decisions).toEqual([]);
  });

  it("the firing checks the stored action itself and falls back to the team's own rule", async () => {
    const { planId, reviewRequestId } = await agentTimedApprove();
    await setReviewDefaults(as.personCtx, { deadlineSeconds: 3600, onTimeout: "reject" });
    try {
      await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_only" });
      expect((await reviewRow(reviewRequestId))[0]).toMatchObject({
        onTimeout: "reject",
        replaced: "approve",
      });
      // As a version before the revisit would have left it: the agent's approve stored.
      await tenant.handle.db.execute(
        sql`update review_request set on_timeout = 'approve', on_timeout_replaced = null
          where id = ${reviewRequestId}::uuid`,
      );
      await deadlinePasses(reviewRequestId);
      const [after] = await reviewRow(reviewRequestId);
      expect(after).toMatchObject({
        status: "decided",
        onTimeout: "reject",
        replaced: "approve",
        stepStatus: "failed",
        result: null,
      });
      const [decision] = await readRows<{ decision: string; label: string }>(
        tenant.handle.db,
        sql`select decision, decided_by_label as label from review_decision
          where review_request_id = ${reviewRequestId}::uuid`,
      );
      expect(decision).toEqual({ decision: "reject", label: "Cairn (deadline)" });
      const [replaced] = await replacedRows(planId);
      expect(replaced?.payload).toMatchObject({ from: "approve", to: "reject" });
      expect(replaced?.payload.reason).toContain("the team's own action when it passes, reject");
    } finally {
      await setReviewDefaults(as.personCtx, { deadlineSeconds: null, onTimeout: null });
    }
  });

  it("keeps a deadline that is wholly the team's own", async () => {
    await setReviewDefaults(as.personCtx, { deadlineSeconds: 3600, onTimeout: "approve" });
    try {
      await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_and_agents" });
      const { planId } = await tenant.agent.ok("create_research_plan", {
        name: "Team deadline",
        researchQuestion: "q",
        steps: planSteps("checkpoint"),
      });
      const handed = await tenant.agent.ok("get_next_step", { planId });
      const review = await tenant.agent.ok("request_user_review", {
        planId,
        stepId: handed.step.stepId,
        summary: "The team's deadline.",
        proposedResult: { ok: true },
      });
      await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_only" });
      expect((await reviewRow(review.reviewRequestId))[0]).toMatchObject({
        onTimeout: "approve",
        replaced: null,
      });
      await deadlinePasses(review.reviewRequestId);
      expect((await reviewRow(review.reviewRequestId))[0]).toMatchObject({
        status: "decided",
        stepStatus: "completed",
        result: { ok: true },
      });
      expect(await replacedRows(planId)).toEqual([]);
    } finally {
      await setReviewDefaults(as.personCtx, { deadlineSeconds: null, onTimeout: null });
    }
  });
});
