/**
 * Every ordinary path that once left a plan no agent could finish, tried as a
 * client meets it: the official SDK over /api/mcp of the production build, on
 * PGlite and on PostgreSQL 15, with a short step lease. Each plan ends (or fails
 * with a reason), and at the end every plan's audit trail replays to its steps.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planAuditLog, researchPlans } from "@/lib/db/schema";
import { type AppServer, startAppServer } from "./support/app-server";
import { storedAuditProblems } from "./support/audit-replay";
import { BACKENDS } from "./support/databases";
import { type Agent, connectAgent, report } from "./support/mcp-client";

const LEASE_SECONDS = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BACKENDS)("no plan gets stuck on %s", (backend) => {
  let app: AppServer;
  let agent: Agent;
  let other: Agent;

  beforeAll(async () => {
    app = await startAppServer(backend, {
      env: { CAIRN_STEP_LEASE_SECONDS: String(LEASE_SECONDS) },
    });
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    other = await connectAgent(app.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    await agent?.close();
    await other?.close();
    await app?.stop();
  });

  const steps = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      stepType: i === 1 ? "checkpoint" : "search",
      instructions: `Step ${i + 1}.`,
    }));

  function submit(who: Agent, planId: string, stepId: string, result: object = { ok: true }) {
    return who.call("submit_step_result", {
      planId,
      stepId,
      result,
      resultSummary: "Done.",
      confidence: 0.8,
      stepExecutionReport: report,
    });
  }

  /** Pulls and submits until the plan answers something other than `ready`. */
  async function runToEnd(planId: string) {
    for (let i = 0; i < 50; i += 1) {
      const next = await agent.ok("get_next_step", { planId });
      if (next.status !== "ready") return next;
      const answer = await submit(agent, planId, next.step.stepId);
      expect(answer.isError, answer.text).toBe(false);
    }
    throw new Error("the plan did not end in 50 steps");
  }

  it("hands a step sent back with modify out again first, with the feedback", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Modify",
      researchQuestion: "q",
      steps: steps(3),
    });
    const first = await agent.ok("get_next_step", { planId: plan.planId });
    expect(first.step).toMatchObject({ stepOrder: 1, attempt: 1 });
    expect(Date.parse(first.step.leaseExpiresAt)).toBeGreaterThan(Date.now());
    const review = await agent.ok("request_user_review", {
      planId: plan.planId,
      stepId: first.step.stepId,
      summary: "Look at the sources.",
    });
    const decided = await agent.ok("submit_user_decision", {
      planId: plan.planId,
      reviewRequestId: review.reviewRequestId,
      decision: "modify",
      feedback: "Use primary sources only.",
    });
    expect(decided).toMatchObject({ stepStatus: "in_progress", planStatus: "executing" });

    const again = await agent.ok("get_next_step", { planId: plan.planId });
    expect(again.status).toBe("ready");
    expect(again.step).toMatchObject({ stepId: first.step.stepId, stepOrder: 1, attempt: 2 });
    expect(again.step.instructions).toContain("User feedback: Use primary sources only.");
    await submit(agent, plan.planId, again.step.stepId);
    expect((await runToEnd(plan.planId)).status).toBe("plan_complete");
  });

  it("hands a step out again once its lease runs out; exactly one result is kept", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Leases",
      researchQuestion: "q",
      // No checkpoint: one holds the steps after it (people-only.test.ts).
      steps: steps(3).map((step) => ({ ...step, stepType: "search" })),
    });
    // The first holder's answer is "lost": it never works on the step.
    const lost = await agent.ok("get_next_step", { planId: plan.planId });
    const second = await other.ok("get_next_step", { planId: plan.planId });
    expect(second.step.stepOrder).toBe(2);
    // get_step_context renews the second holder's lease while the first runs out.
    await sleep(LEASE_SECONDS * 600);
    const context = await other.ok("get_step_context", {
      planId: plan.planId,
      stepId: second.step.stepId,
    });
    expect(Date.parse(context.leaseExpiresAt)).toBeGreaterThan(
      Date.parse(second.step.leaseExpiresAt),
    );
    await sleep(LEASE_SECONDS * 600);

    const reissued = await other.ok("get_next_step", { planId: plan.planId });
    expect(reissued.step).toMatchObject({ stepId: lost.step.stepId, attempt: 2 });
    // The renewed step 2 is not handed out again; step 3 is next.
    const third = await other.ok("get_next_step", { planId: plan.planId });
    expect(third.step.stepOrder).toBe(3);

    // The second holder of step 1 answers first; the first holder's late answer conflicts.
    expect((await submit(other, plan.planId, lost.step.stepId, { by: "second" })).isError).toBe(
      false,
    );
    const late = await submit(agent, plan.planId, lost.step.stepId, { by: "first" });
    expect(late.isError).toBe(true);
    expect(late.text).toMatch(/^CONFLICT: .*already completed/);
    const stored = await agent.ok("get_step_context", {
      planId: plan.planId,
      stepId: lost.step.stepId,
    });
    expect(stored.step.result).toEqual({ by: "second" });

    // The other order: the step's first holder answers before the re-hand-out's holder.
    await submit(other, plan.planId, second.step.stepId);
    await sleep(LEASE_SECONDS * 1000 + 300);
    const step3Again = await agent.ok("get_next_step", { planId: plan.planId });
    expect(step3Again.step).toMatchObject({ stepId: third.step.stepId, attempt: 2 });
    expect((await submit(other, plan.planId, third.step.stepId)).isError).toBe(false);
    expect((await submit(agent, plan.planId, third.step.stepId)).text).toMatch(/^CONFLICT: /);
    expect((await agent.ok("get_next_step", { planId: plan.planId })).status).toBe("plan_complete");
  });

  it("says when the next lease runs out while every step is held", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Held",
      researchQuestion: "q",
      steps: steps(1),
    });
    const held = await agent.ok("get_next_step", { planId: plan.planId });
    const waiting = await other.ok("get_next_step", { planId: plan.planId });
    expect(waiting).toMatchObject({ status: "no_pending_steps", inProgressCount: 1 });
    expect(waiting.nextLeaseExpiresAt).toBe(held.step.leaseExpiresAt);
    await submit(agent, plan.planId, held.step.stepId);
  });

  it("waits for modify_plan when add_steps fires on the last open step", async () => {
    const make = () =>
      agent.ok("create_research_plan", {
        name: "More steps",
        researchQuestion: "q",
        steps: [
          { stepType: "search", instructions: "Search." },
          { stepType: "analyze", instructions: "Analyze." },
        ],
        branchingConditions: [
          {
            afterStepOrder: 2,
            conditionExpression: "result.gaps === true",
            ifTrueAction: "add_steps",
            actionParams: { why: "gaps found" },
          },
        ],
      });
    for (const ending of ["add_steps", "decline_add_steps"] as const) {
      const plan = await make();
      const one = await agent.ok("get_next_step", { planId: plan.planId });
      await submit(agent, plan.planId, one.step.stepId);
      const two = await agent.ok("get_next_step", { planId: plan.planId });
      const fired = await submit(agent, plan.planId, two.step.stepId, { gaps: true });
      expect(fired.data).toMatchObject({ planStatus: "executing" });
      expect(fired.data.hint).toMatch(/add_steps/);
      const waiting = await agent.ok("get_next_step", { planId: plan.planId });
      expect(waiting).toMatchObject({
        status: "awaiting_steps",
        condition: { conditionExpression: "result.gaps === true", params: { why: "gaps found" } },
      });
      if (ending === "add_steps") {
        await agent.ok("modify_plan", {
          planId: plan.planId,
          action: "add_steps",
          modificationRationale: "Fill the gaps.",
          steps: [{ stepType: "search", instructions: "Fill the gaps." }],
        });
        const added = await agent.ok("get_next_step", { planId: plan.planId });
        expect(added.step).toMatchObject({ stepOrder: 3, instructions: "Fill the gaps." });
        await submit(agent, plan.planId, added.step.stepId);
      } else {
        const declined = await agent.ok("modify_plan", {
          planId: plan.planId,
          action: "decline_add_steps",
          modificationRationale: "The gaps do not matter for the question.",
        });
        expect(declined.planStatus).toBe("completed");
      }
      expect((await agent.ok("get_next_step", { planId: plan.planId })).status).toBe(
        "plan_complete",
      );
    }
    const notWaiting = await agent.ok("create_research_plan", {
      name: "Not waiting",
      researchQuestion: "q",
      steps: steps(1),
    });
    expect(
      await agent.fails("modify_plan", {
        planId: notWaiting.planId,
        action: "decline_add_steps",
        modificationRationale: "x",
      }),
    ).toMatch(/^INVALID_TRANSITION: .*not waiting for steps/);
  });

  it("evaluates a checkpoint's conditions when a person approves it", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Approve branches",
      researchQuestion: "q",
      steps: steps(4),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: 'status === "completed"',
          ifTrueAction: "skip_to",
          actionParams: { targetStepOrder: 4 },
        },
      ],
    });
    const one = await agent.ok("get_next_step", { planId: plan.planId });
    const review = await agent.ok("request_user_review", {
      planId: plan.planId,
      stepId: one.step.stepId,
      summary: "Check.",
    });
    const approved = await agent.ok("submit_user_decision", {
      planId: plan.planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
    // Step 2 is a checkpoint: the branch passes over it (no branch skips a
    // checkpoint), skips step 3, and the checkpoint comes next.
    expect(approved.firedConditions).toEqual([
      expect.objectContaining({ action: "skip_to", skippedStepIds: [plan.steps[2].stepId] }),
    ]);
    const checkpoint = await agent.ok("get_next_step", { planId: plan.planId });
    expect(checkpoint.step.stepOrder).toBe(2);
    await submit(agent, plan.planId, checkpoint.step.stepId);
    const next = await agent.ok("get_next_step", { planId: plan.planId });
    expect(next.step.stepOrder).toBe(4);
    await submit(agent, plan.planId, next.step.stepId);
    const context = await agent.ok("get_research_context", { planId: plan.planId });
    expect(context.steps.map((s: { status: string }) => s.status)).toEqual([
      "completed",
      "completed",
      "skipped",
      "completed",
    ]);
  });

  it("withdraws a pending review when another agent's branch fails the plan", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Fail withdraws",
      researchQuestion: "q",
      steps: steps(3),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.dead === true",
          ifTrueAction: "fail",
          actionParams: { reason: "Dead end." },
        },
      ],
    });
    const one = await agent.ok("get_next_step", { planId: plan.planId });
    const two = await other.ok("get_next_step", { planId: plan.planId });
    // Step 2 waits for a person; step 1, handed out before, still takes its
    // result (a waiting review holds only the steps after it), and fails the plan.
    const review = await other.ok("request_user_review", {
      planId: plan.planId,
      stepId: two.step.stepId,
      summary: "Check.",
    });
    const failed = await submit(agent, plan.planId, one.step.stepId, { dead: true });
    expect(failed.data.planStatus).toBe("failed");
    const context = await agent.ok("get_research_context", { planId: plan.planId });
    expect(context.reviews).toEqual([
      expect.objectContaining({ reviewRequestId: review.reviewRequestId, status: "withdrawn" }),
    ]);
    expect((await agent.ok("get_next_step", { planId: plan.planId })).status).toBe("plan_failed");
    expect(
      await agent.fails("submit_user_decision", {
        planId: plan.planId,
        reviewRequestId: review.reviewRequestId,
        decision: "approve",
      }),
    ).toMatch(/^CONFLICT: /);
  });

  it("refuses to remove a plan's only step with a reason, never an internal transition error", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Only step",
      researchQuestion: "q",
      steps: steps(2),
    });
    const one = await agent.ok("get_next_step", { planId: plan.planId });
    await submit(agent, plan.planId, one.step.stepId);
    // Removing the last open step of an executing plan completes it.
    const removed = await agent.ok("modify_plan", {
      planId: plan.planId,
      action: "remove_step",
      stepId: plan.steps[1].stepId,
      modificationRationale: "Not needed.",
    });
    expect(removed.planStatus).toBe("completed");

    const single = await agent.ok("create_research_plan", {
      name: "Single",
      researchQuestion: "q",
      steps: steps(1),
    });
    const text = await agent.fails("modify_plan", {
      planId: single.planId,
      action: "remove_step",
      stepId: single.steps[0].stepId,
      modificationRationale: "x",
    });
    expect(text).toMatch(/^VALIDATION_ERROR: .*keeps at least one/);
    expect((await runToEnd(single.planId)).status).toBe("plan_complete");
  });

  it("submitting a still-pending step starts it with its own audit row", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Auto-start",
      researchQuestion: "q",
      steps: steps(1),
    });
    const answer = await submit(agent, plan.planId, plan.steps[0].stepId);
    expect(answer.data.planStatus).toBe("completed");
  });

  it("leaves an audit trail that replays to every plan's steps", async () => {
    await app.stopServer();
    const handle = await app.openDatabase();
    try {
      const plans = await handle.db.select({ id: researchPlans.id }).from(researchPlans);
      expect(plans.length).toBeGreaterThanOrEqual(10);
      expect(await storedAuditProblems(handle.db)).toEqual({});
      // A plan that a branch failed withdrew the review that was still open.
      const rows = await handle.db
        .select({ planId: planAuditLog.planId, payload: planAuditLog.payload })
        .from(planAuditLog);
      const actionsOf = (planId: string | null) =>
        rows.filter((r) => r.planId === planId).map((r) => r.payload.action);
      for (const { planId } of rows.filter((r) => r.payload.action === "branch_failed_plan")) {
        expect(actionsOf(planId)).toContain("review_withdrawn");
      }
      const reissues = await handle.db
        .select({ payload: planAuditLog.payload })
        .from(planAuditLog)
        .where(eq(planAuditLog.eventType, "step_started"));
      const reasons = reissues.map((r) => r.payload.reissued).filter(Boolean);
      expect(reasons).toEqual(expect.arrayContaining(["lease_expired", "redo_requested"]));
      expect(reissues.some((r) => r.payload.autoStarted === true)).toBe(true);
    } finally {
      await handle.close();
    }
  });
});
