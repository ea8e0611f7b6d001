/**
 * Checkpoints a person can trust (docs/reviews.md, docs/audit.md): the team
 * decides who may answer a review; a decision names its review and is bound to
 * what the reviewer was shown; an approve completes the step with what the
 * person saw; the trail says how each decision was made and its hash chain
 * shows an edit. In process, on PGlite and on PostgreSQL 15.
 */
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { checkPlanTrailInDatabase, verifyPlanTrail } from "@/lib/services/audit/audit-chain";
import { setDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import type { ServiceContext } from "@/lib/services/shared/context";
import { addChainedCheck, dropChainedCheck } from "../support/audit-chained";
import { expectExportChecks, readAuditExport } from "../support/audit-export";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, signedInAdmin, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("checkpoints on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const as = {} as {
    person: ReturnType<typeof inProcessAgent>;
    app: ReturnType<typeof inProcessAgent>;
    personCtx: ServiceContext;
  };

  beforeAll(async () => {
    as.personCtx = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
    as.person = inProcessAgent(as.personCtx);
    as.app = inProcessAgent({
      ...tenant.agent.ctx,
      actor: { type: "oauth_app", id: randomUUID(), label: 'app "Claude" of alpha@example.com' },
    });
  });

  const policy = (decisionPolicy: "people_only" | "people_and_agents") =>
    setDecisionPolicy(as.personCtx, { decisionPolicy });

  /** The reproduction: [search, synthesize], `confidence < 0.5 -> fail` after step 1. */
  async function gatedPlanAtReview(review: Record<string, unknown> = {}) {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Gate",
      researchQuestion: "q",
      steps: planSteps("search", "synthesize", "critique"),
      branchingConditions: [
        { afterStepOrder: 1, conditionExpression: "confidence < 0.5", ifTrueAction: "fail" },
        {
          afterStepOrder: 1,
          conditionExpression: "confidence > 0.85",
          ifTrueAction: "skip_to",
          actionParams: { targetStepOrder: 3 },
        },
      ],
    });
    const planId: string = created.planId;
    const next = await tenant.agent.ok("get_next_step", { planId });
    const requested = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: next.step.stepId,
      summary: "Three sources found.",
      ...review,
    });
    return { planId, stepId: next.step.stepId as string, requested };
  }

  it("with people only, refuses every agent decision and points to the review page", async () => {
    await policy("people_only");
    try {
      const { planId, requested } = await gatedPlanAtReview();
      expect(requested.decisionPolicy).toBe("people_only");
      expect(requested.reviewUrl).toMatch(new RegExp(`/plans/${planId}#review$`));
      for (const agent of [tenant.agent, as.app]) {
        for (const decision of ["approve", "reject", "modify", "skip"]) {
          const refused = await agent.fails("submit_user_decision", {
            planId,
            reviewRequestId: requested.reviewRequestId,
            decision,
            feedback: "From the chat.",
          });
          expect(refused).toMatch(/^FORBIDDEN: This team lets only people decide checkpoints/);
          expect(refused).toContain(requested.reviewUrl);
        }
      }
      // Nothing changed: the plan still waits, and a person decides.
      expect((await tenant.agent.ok("get_plan_status", { planId })).status).toBe("awaiting_review");
      const decided = await as.person.ok("submit_user_decision", {
        planId,
        reviewRequestId: requested.reviewRequestId,
        decision: "approve",
      });
      expect(decided).toMatchObject({ channel: "web", planStatus: "executing" });
    } finally {
      await policy("people_and_agents");
    }
  });

  it("with people only, refuses an agent's own deadline approve or skip", async () => {
    await policy("people_only");
    try {
      const created = await tenant.agent.ok("create_research_plan", {
        name: "Deadline",
        researchQuestion: "q",
        steps: planSteps("search"),
      });
      const next = await tenant.agent.ok("get_next_step", { planId: created.planId });
      for (const onTimeout of ["approve", "skip"]) {
        expect(
          await tenant.agent.fails("request_user_review", {
            planId: created.planId,
            stepId: next.step.stepId,
            summary: "s",
            deadlineSeconds: 1,
            onTimeout,
          }),
        ).toMatch(/^FORBIDDEN: onTimeout: this team lets only people decide/);
      }
      // escalate leaves the step to a person, so it is allowed.
      await tenant.agent.ok("request_user_review", {
        planId: created.planId,
        stepId: next.step.stepId,
        summary: "s",
        deadlineSeconds: 60,
        onTimeout: "escalate",
      });
    } finally {
      await policy("people_and_agents");
    }
  });

  it("with relaying allowed, marks an agent's decision as relayed by its key or app", async () => {
    const { planId, requested } = await gatedPlanAtReview();
    expect(requested.decisionPolicy).toBe("people_and_agents");
    const decided = await as.app.ok("submit_user_decision", {
      planId,
      reviewRequestId: requested.reviewRequestId,
      contentDigest: requested.contentDigest,
      decision: "skip",
    });
    expect(decided.channel).toBe("relayed");
    const context = await tenant.agent.ok("get_research_context", { planId });
    expect(context.reviews[0].decision).toMatchObject({
      channel: "relayed",
      decidedBy: 'app "Claude" of alpha@example.com',
    });
  });

  it("an approve without a proposal leaves the plan running: no gate fires on an unreported confidence", async () => {
    const { planId, requested } = await gatedPlanAtReview();
    const decided = await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: requested.reviewRequestId,
      decision: "approve",
      feedback: "Looks right.",
    });
    expect(decided).toMatchObject({ planStatus: "executing", firedConditions: [] });
    const status = await tenant.agent.ok("get_plan_status", { planId });
    expect(status.status).toBe("executing");
    const context = await tenant.agent.ok("get_research_context", { planId });
    expect(context.steps[0]).toMatchObject({
      status: "completed",
      result: { approvedByReview: requested.reviewRequestId, feedback: "Looks right." },
    });
  });

  it("an approve completes the step with the proposal and fires the gate it satisfies", async () => {
    const high = await gatedPlanAtReview({
      proposedResult: { sources: 3 },
      proposedConfidence: 0.9,
    });
    const approved = await as.person.ok("submit_user_decision", {
      planId: high.planId,
      reviewRequestId: high.requested.reviewRequestId,
      decision: "approve",
    });
    expect(approved.firedConditions.map((f: { action: string }) => f.action)).toEqual(["skip_to"]);
    expect((await tenant.agent.ok("get_next_step", { planId: high.planId })).step.stepOrder).toBe(
      3,
    );

    const low = await gatedPlanAtReview({
      proposedResult: { sources: 0 },
      proposedConfidence: 0.2,
    });
    const failed = await as.person.ok("submit_user_decision", {
      planId: low.planId,
      reviewRequestId: low.requested.reviewRequestId,
      decision: "approve",
    });
    expect(failed.planStatus).toBe("failed");
    expect((await tenant.agent.ok("get_plan_status", { planId: low.planId })).status).toBe(
      "failed",
    );
  });

  it("a decision names its review: left out, the answer gives the pending one", async () => {
    const { planId, requested } = await gatedPlanAtReview();
    expect(await tenant.agent.fails("submit_user_decision", { planId, decision: "approve" })).toBe(
      `VALIDATION_ERROR: reviewRequestId is required: name the review the person answered. The plan's pending review is ${requested.reviewRequestId}; pass it only if that is the review the person saw.`,
    );
  });

  it("a relayed approve of an older review never lands on the newer one", async () => {
    const { planId, stepId, requested } = await gatedPlanAtReview();
    // Meanwhile a reviewer sends the step back; the agent redoes it and asks again.
    await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: requested.reviewRequestId,
      decision: "modify",
      feedback: "Add a fourth source.",
    });
    await tenant.agent.ok("get_next_step", { planId });
    const newer = await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "Four now.",
    });
    const stale = await tenant.agent.fails("submit_user_decision", {
      planId,
      reviewRequestId: requested.reviewRequestId,
      decision: "approve",
    });
    expect(stale).toMatch(/^CONFLICT: Review .* is no longer pending/);
    expect(stale).toContain(newer.reviewRequestId);
    expect((await tenant.agent.ok("get_plan_status", { planId })).status).toBe("awaiting_review");
  });

  it("a decision on content that changed since it was shown is a CONFLICT that changes nothing", async () => {
    const { planId, stepId, requested } = await gatedPlanAtReview();
    // modify_plan waits for the decision, so the review's content cannot change through it...
    expect(
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "update_step_instructions",
        stepId,
        instructions: "Look somewhere else entirely.",
        modificationRationale: "Changed my mind.",
      }),
    ).toMatch(/^PLAN_NOT_MODIFIABLE: /);
    // ...but whatever changes it (here, the database directly) unbinds earlier decisions.
    await tenant.handle.db.execute(
      sql`update plan_step set instructions = 'Look somewhere else entirely.' where id = ${stepId}::uuid`,
    );
    for (const call of [
      { contentDigest: requested.contentDigest },
      {}, // A relay without a digest is bound to the review as requested.
    ]) {
      expect(
        await tenant.agent.fails("submit_user_decision", {
          planId,
          reviewRequestId: requested.reviewRequestId,
          decision: "approve",
          ...call,
        }),
      ).toMatch(/^CONFLICT: What the review shows changed since/);
    }
    expect((await tenant.agent.ok("get_plan_status", { planId })).status).toBe("awaiting_review");
    // The page shows what the review shows now; a person deciding on that goes through.
    const context = await tenant.agent.ok("get_research_context", { planId });
    const current = context.reviews[0].currentDigest;
    expect(current).not.toBe(requested.contentDigest);
    await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: requested.reviewRequestId,
      contentDigest: current,
      decision: "skip",
    });
  });

  it("chains the trail: it verifies, an edited row is named, the export checks without Cairn", async () => {
    const { planId, requested } = await gatedPlanAtReview();
    await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: requested.reviewRequestId,
      decision: "approve",
    });
    const db = tenant.handle.db;
    const verified = await verifyPlanTrail(db, planId);
    expect(verified).toMatchObject({ verified: true });
    expect(verified.rows).toBeGreaterThanOrEqual(4);
    const tenantId = as.personCtx.tenantId;
    expect(await checkPlanTrailInDatabase(db, planId, tenantId)).toEqual(verified);

    // An auditor's own check of the export: the fields shown are the canonical's,
    // sha256 over prev + canonical, linked in order up to the head.
    const exported = await readAuditExport(as.personCtx, planId);
    // The approve's transaction signed the head over every row.
    expectExportChecks(exported, exported.rows.length);
    const decision = exported.rows.find(
      (row) => (row.payload as { action?: string } | null)?.action === "decision",
    );
    expect(decision?.payload).toMatchObject({
      channel: "web",
      reviewDigest: requested.contentDigest,
    });

    // Someone with database access rewrites who decided.
    await db.execute(
      sql`update plan_audit_log set actor_label = 'someone else' where id = ${decision?.id}::uuid`,
    );
    const tampered = await verifyPlanTrail(db, planId);
    expect(tampered).toMatchObject({
      verified: false,
      firstBadRow: { id: decision?.id, position: decision?.chainIndex },
    });
    expect(tampered.firstBadRow?.reason).toMatch(/does not match its digest/);
    // The plan page's check, done by the database, finds the same row for the same reason.
    expect(await checkPlanTrailInDatabase(db, planId, tenantId)).toEqual(tampered);

    // A row deleted from the middle of another trail is named by the link after it.
    const other = await gatedPlanAtReview();
    const [second, third] = (await readAuditExport(as.personCtx, other.planId)).rows.slice(1, 3);
    await db.execute(sql`delete from plan_audit_log where id = ${second?.id}::uuid`);
    const gap = await verifyPlanTrail(db, other.planId);
    expect(gap.firstBadRow).toEqual({
      id: third?.id,
      position: 2,
      reason: "the row is link 3 where link 2 should be (a row before it is missing)",
    });
    expect(await checkPlanTrailInDatabase(db, other.planId, tenantId)).toEqual(gap);

    // A row taken out of the chain, and one relinked: both checks name the same row for the same reason.
    const moved = await gatedPlanAtReview();
    const movedRows = (await readAuditExport(as.personCtx, moved.planId)).rows;
    const last = movedRows.at(-1);
    // The database refuses that (plan_audit_log_chained), until someone with SQL drops its check.
    await dropChainedCheck(db);
    await db.execute(
      sql`update plan_audit_log set chain_index = null where id = ${last?.id}::uuid`,
    );
    await addChainedCheck(db);
    const unplaced = await verifyPlanTrail(db, moved.planId);
    expect(unplaced.firstBadRow).toEqual({
      id: last?.id,
      position: movedRows.length,
      reason: "the row has no place in the chain",
    });
    expect(await checkPlanTrailInDatabase(db, moved.planId, tenantId)).toEqual(unplaced);
    const relinked = await gatedPlanAtReview();
    const relinkedRows = (await readAuditExport(as.personCtx, relinked.planId)).rows;
    await db.execute(
      sql`update plan_audit_log set prev_digest = ${relinkedRows[0]?.digest ?? ""}
        where id = ${relinkedRows[2]?.id}::uuid`,
    );
    const unlinked = await verifyPlanTrail(db, relinked.planId);
    expect(unlinked.firstBadRow).toEqual({
      id: relinkedRows[2]?.id,
      position: 3,
      reason: "the row does not link to the digest of the row before it",
    });
    expect(await checkPlanTrailInDatabase(db, relinked.planId, tenantId)).toEqual(unlinked);
  });
});
