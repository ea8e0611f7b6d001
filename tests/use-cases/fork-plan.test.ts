/**
 * fork_plan (docs/history-and-forks.md): a new plan from a step of another,
 * the steps before it carried with their results, evidence and decisions,
 * the step and those after it pending with the edits; both plans name each
 * other, both trails record the fork, the source is untouched; a carried
 * checkpoint counts only as the checkpoint rule says. In process, on PGlite
 * and on PostgreSQL 15.
 */
import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { planAuditLog, researchPlans } from "../../lib/db/schema";
import { FORK_LINKS } from "../../lib/services/plans/fork-links";
import { submitUserDecision } from "../../lib/services/plans/submit-user-decision";
import { setDecisionPolicy } from "../../lib/services/reviews/decision-policy";
import { getPlanPage } from "../../lib/services/views/plan-page";
import { BACKENDS } from "../support/databases";
import { planSteps, signedInAdmin, useFreshTenant } from "../support/in-process";
import { report } from "../support/mcp-client";

/** The database's own refusal, from the statement or the commit, under any error wrapping it. */
async function refusal(write: Promise<unknown>): Promise<string> {
  try {
    await write;
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    return [error, cause].map((e) => (e instanceof Error ? e.message : String(e))).join(" / ");
  }
  throw new Error("the database took the write");
}

describe.each(BACKENDS)("fork_plan on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("carries step 1 with its result and evidence, hands out the edited step 2, and links both plans", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Heat pumps",
      researchQuestion: "q",
      steps: planSteps("search", "analyze", "synthesize"),
      branchingConditions: [
        {
          afterStepOrder: 2,
          conditionExpression: "confidence < 0.1",
          ifTrueAction: "skip_to",
          actionParams: { targetStepOrder: 3 },
        },
      ],
    });
    const { planId } = created;
    const [one, two] = created.steps.map((s: { stepId: string }) => s.stepId);
    await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.ok("submit_step_result", {
      planId,
      stepId: one,
      result: { found: 3 },
      confidence: 0.9,
      stepExecutionReport: { ...report, webFetches: [{ url: "https://example.org/a" }] },
      evidence: {
        claims: [{ text: "A claim.", supports: [{ source: "https://example.org/a" }] }],
      },
    });
    await tenant.agent.ok("store_research", {
      planId,
      stepId: one,
      artifactType: "finding",
      title: "Three studies",
      content: { studies: 3 },
      contentText: "Three studies of heat pumps.",
      confidence: 0.8,
    });
    const before = await tenant.agent.ok("get_research_context", { planId });

    const fork = await tenant.agent.ok("fork_plan", {
      planId,
      fromStepId: two,
      stepEdits: [{ stepId: two, instructions: "Compare by cost." }],
    });
    expect(fork).toMatchObject({
      name: "Heat pumps (fork)",
      status: "executing",
      forkedFrom: { planId, stepId: two, stepOrder: 2 },
    });
    expect(fork.steps.map((s) => [s.stepOrder, s.status, s.carriedFromStepId])).toEqual([
      [1, "completed", one],
      [2, "pending", null],
      [3, "pending", null],
    ]);
    const next = await tenant.agent.ok("get_next_step", { planId: fork.planId });
    expect(next.step).toMatchObject({ stepOrder: 2, instructions: "Compare by cost." });

    const context = await tenant.agent.ok("get_research_context", { planId: fork.planId });
    expect(context.steps[0]).toMatchObject({
      result: { found: 3 },
      confidence: 0.9,
      carriedFromStepId: one,
    });
    expect(context.evidence.sources.map((s) => s.href)).toEqual(["https://example.org/a"]);
    expect(context.evidence.claims).toHaveLength(1);
    // The research stored for step 1 is carried with it: the fork's own copy, of its step.
    expect(context.artifacts).toEqual([
      expect.objectContaining({ stepId: fork.steps[0]?.stepId, title: "Three studies" }),
    ]);
    expect(context.artifacts[0]?.artifactId).not.toBe(before.artifacts[0]?.artifactId);
    expect(context.branchingConditions).toEqual([
      expect.objectContaining({ afterStepOrder: 2, fired: null }),
    ]);
    expect(context.plan.forkedFrom).toEqual({ planId, stepId: two, name: "Heat pumps" });

    // The source: the same steps, now naming its fork, and a trail row for the fork.
    const after = await tenant.agent.ok("get_research_context", { planId });
    expect(after.steps).toEqual(before.steps);
    expect(after.plan.forks).toEqual([
      { planId: fork.planId, name: "Heat pumps (fork)", status: "executing" },
    ]);
    const status = await tenant.agent.ok("get_plan_status", { planId });
    expect(status.forks.map((f) => f.planId)).toEqual([fork.planId]);
    const trails = await tenant.handle.db
      .select({ planId: planAuditLog.planId, payload: planAuditLog.payload })
      .from(planAuditLog)
      .where(eq(planAuditLog.eventType, "plan_modified"));
    expect(trails.filter((row) => row.payload.action === "fork_made")).toEqual([
      { planId, payload: { action: "fork_made", forkPlanId: fork.planId, fromStepOrder: 2 } },
    ]);
    const history = await tenant.agent.ok("get_plan_history", { planId: fork.planId });
    expect(history.revisions).toEqual([expect.objectContaining({ revision: 1, cause: "forked" })]);
    expect((await tenant.agent.ok("get_plan_history", { planId })).revisions).toHaveLength(1);
  });

  it("names a plan's FORK_LINKS newest forks, newest first, and each fork's source, in every reader", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Forked often",
      researchQuestion: "q",
      steps: planSteps("search", "analyze"),
    });
    const { planId } = created;
    const [one, two] = created.steps.map((s: { stepId: string }) => s.stepId);
    await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, one as string);
    const forks: string[] = [];
    for (let i = 0; i < FORK_LINKS + 2; i += 1) {
      const fork = await tenant.agent.ok("fork_plan", {
        planId,
        fromStepId: two,
        name: `Fork ${i}`,
      });
      forks.push(fork.planId);
    }
    const newest = forks
      .slice(-FORK_LINKS)
      .reverse()
      .map((id) => ({ planId: id, name: `Fork ${forks.indexOf(id)}`, status: "executing" }));

    const status = await tenant.agent.ok("get_plan_status", { planId });
    expect(status).toMatchObject({ forkedFrom: null, forks: newest });
    const context = await tenant.agent.ok("get_research_context", { planId });
    expect(context.plan).toMatchObject({ forkedFrom: null, forks: newest });
    const page = await getPlanPage(tenant.agent.ctx, planId);
    expect(page?.plan).toMatchObject({ forkedFrom: null, forks: newest });

    const source = { planId, stepId: two, name: "Forked often" };
    const last = forks.at(-1) as string;
    const forkStatus = await tenant.agent.ok("get_plan_status", { planId: last });
    expect(forkStatus).toMatchObject({ forkedFrom: source, forks: [] });
    const forkContext = await tenant.agent.ok("get_research_context", { planId: last });
    expect(forkContext.plan).toMatchObject({ forkedFrom: source, forks: [] });
    expect((await getPlanPage(tenant.agent.ctx, last))?.plan.forkedFrom).toEqual(source);
  });

  it("refuses a fork past an unfinished step, an edit of a carried step, and another plan's step", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Refusals",
      researchQuestion: "q",
      steps: planSteps("search", "analyze", "synthesize"),
    });
    const { planId } = created;
    const [one, two, three] = created.steps.map((s: { stepId: string }) => s.stepId);
    expect(await tenant.agent.fails("fork_plan", { planId, fromStepId: three })).toMatch(
      /^INVALID_TRANSITION: Step 1 of plan .* is pending; a fork carries only steps that are completed or skipped/,
    );
    const first = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, first.step.stepId);
    expect(
      await tenant.agent.fails("fork_plan", {
        planId,
        fromStepId: two,
        stepEdits: [{ stepId: one, instructions: "Again." }],
      }),
    ).toMatch(/^VALIDATION_ERROR: Step 1 comes before step 2, where the fork starts/);
    expect(
      await tenant.agent.fails("fork_plan", {
        planId,
        fromStepId: two,
        stepEdits: [{ stepId: two, arguments: { query: "x" } }],
      }),
    ).toMatch(/^VALIDATION_ERROR: steps\[1\]\.arguments needs tool/);
    expect(
      await tenant.agent.fails("fork_plan", { planId, fromStepId: crypto.randomUUID() }),
    ).toMatch(/^NOT_FOUND: /);
  });

  it("keeps the approvals the source plan's reviews need (security review)", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Two approvals",
      researchQuestion: "q",
      steps: planSteps("checkpoint", "synthesize"),
      approvalsRequired: 2,
    });
    const fork = await tenant.agent.ok("fork_plan", {
      planId: created.planId,
      fromStepId: created.steps[0].stepId,
    });
    const checkpoint = await tenant.agent.ok("get_next_step", { planId: fork.planId });
    const review = await tenant.agent.ok("request_user_review", {
      planId: fork.planId,
      stepId: checkpoint.step.stepId,
      summary: "Scope?",
    });
    expect(review.approvalsRequired).toBe(2);
  });

  it("under people_only asks a person again for a checkpoint whose content changed after its decision", async () => {
    const person = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
    await setDecisionPolicy(person, { decisionPolicy: "people_only" });
    try {
      const created = await tenant.agent.ok("create_research_plan", {
        name: "Checkpoint",
        researchQuestion: "q",
        steps: planSteps("checkpoint", "analyze", "synthesize"),
      });
      const { planId } = created;
      const checkpoint = await tenant.agent.ok("get_next_step", { planId });
      const review = await tenant.agent.ok("request_user_review", {
        planId,
        stepId: checkpoint.step.stepId,
        summary: "Scope?",
        proposedResult: { scope: "Europe" },
      });
      await submitUserDecision(person, {
        planId,
        reviewRequestId: review.reviewRequestId,
        decision: "approve",
        contentDigest: review.contentDigest,
      });
      const analyze = await tenant.agent.ok("get_next_step", { planId });
      await tenant.agent.submit(planId, analyze.step.stepId);

      // Unchanged, the person's decision is carried.
      const kept = await tenant.agent.ok("fork_plan", {
        planId,
        fromStepId: created.steps[2].stepId,
      });
      expect(kept.steps.map((s) => s.status)).toEqual(["completed", "completed", "pending"]);
      expect(kept.reopened).toBeUndefined();

      // What the person decided changed since: the fork starts at the checkpoint.
      await tenant.agent.ok("modify_plan", {
        planId,
        action: "update_step_instructions",
        stepId: checkpoint.step.stepId,
        instructions: "Scope it to Asia instead.",
        modificationRationale: "A new scope.",
      });
      const reopened = await tenant.agent.ok("fork_plan", {
        planId,
        fromStepId: created.steps[2].stepId,
      });
      expect(reopened.reopened).toMatch(
        /^The fork starts at step 1, not 3: what checkpoint step 1 showed changed/,
      );
      expect(reopened.steps.map((s) => s.status)).toEqual(["pending", "pending", "pending"]);
      const next = await tenant.agent.ok("get_next_step", { planId: reopened.planId });
      expect(next.step).toMatchObject({ stepOrder: 1, stepType: "checkpoint" });
      // Only a person passes it: the agent's result is refused.
      expect(
        await tenant.agent.fails("submit_step_result", {
          planId: reopened.planId,
          stepId: next.step.stepId,
          result: { scope: "Asia" },
          stepExecutionReport: report,
        }),
      ).toMatch(/^FORBIDDEN: /);
      const rows = await tenant.handle.db
        .select({ payload: planAuditLog.payload })
        .from(planAuditLog)
        .where(
          and(
            eq(planAuditLog.planId, reopened.planId),
            eq(planAuditLog.eventType, "plan_modified"),
          ),
        );
      expect(rows[0]?.payload).toMatchObject({ action: "forked", startOrder: 1 });

      // A writer that skips fork_plan and copies the changed checkpoint as decided, with its
      // review and decision, is refused by the database at its commit, and nothing stays.
      const db = tenant.handle.db;
      const [copy, stepCopy, reviewCopy] = [
        crypto.randomUUID(),
        crypto.randomUUID(),
        crypto.randomUUID(),
      ];
      const refused = await refusal(
        db.transaction(async (tx) => {
          await tx.execute(sql`insert into research_plan (id, tenant_id, name, research_question)
            select ${copy}, tenant_id, 'Copied', research_question from research_plan
            where id = ${planId}`);
          await tx.execute(sql`insert into plan_step (id, tenant_id, plan_id, step_order, step_type,
              instructions, status, carried_from_step_id)
            select ${stepCopy}, tenant_id, ${copy}, step_order, step_type, instructions,
              'completed', id
            from plan_step where id = ${checkpoint.step.stepId}`);
          await tx.execute(sql`insert into review_request (id, tenant_id, plan_id, step_id, summary,
              questions, proposed_result, proposed_confidence, step_instructions, content_digest,
              status, requested_by_type, requested_by_id, requested_by_label, created_at, decided_at)
            select ${reviewCopy}, tenant_id, ${copy}, ${stepCopy}, summary, questions,
              proposed_result, proposed_confidence, step_instructions, content_digest, status,
              requested_by_type, requested_by_id, requested_by_label, created_at, decided_at
            from review_request where id = ${review.reviewRequestId}`);
          await tx.execute(sql`insert into review_decision (tenant_id, review_request_id, plan_id,
              step_id, decision, feedback, decided_by_type, decided_by_id, decided_by_label,
              channel, decision_policy, review_digest, created_at)
            select tenant_id, ${reviewCopy}, ${copy}, ${stepCopy}, decision, feedback,
              decided_by_type, decided_by_id, decided_by_label, channel, decision_policy,
              review_digest, created_at
            from review_decision where review_request_id = ${review.reviewRequestId}`);
        }),
      );
      expect(refused).toMatch(
        /checkpoint 1 of plan .* arrives completed on a decision made on other content/,
      );
      expect(await db.select().from(researchPlans).where(eq(researchPlans.id, copy))).toEqual([]);
    } finally {
      await setDecisionPolicy(person, { decisionPolicy: "people_and_agents" });
    }
  });
});
