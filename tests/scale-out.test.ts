/**
 * Scaled out: two production servers (the production server twice) on one PostgreSQL 15
 * database, as a deployment behind a load balancer runs them. Agents split
 * between the two instances share one 40-step plan: every step is handed out
 * exactly once and the plan completes. A checkpoint requested through one
 * instance and decided through the other (over MCP, and through the web UI's
 * server action) is seen at once on the first. A key revoked on the second,
 * which both remembered, is refused there at once and on the first as soon as
 * the database's notification reaches it (lib/mcp/credential-cache.ts). Afterwards
 * every plan's audit trail replays to its steps.
 */
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { planAuditLog, planSteps, researchPlans } from "@/lib/db/schema";
import { createApiKey } from "@/lib/services/accounts/create-api-key";
import { type AppInstance, type AppServer, startAppServer } from "./support/app-server";
import { replayAudit } from "./support/audit-replay";
import { type Agent, connectAgent, connectModernAgent, report } from "./support/mcp-client";
import { signInOverHttp } from "./support/web-session";

const STEPS = 40;
const AGENTS_PER_INSTANCE = 4;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("two app instances on one PostgreSQL database", () => {
  let app: AppServer;
  let second: AppInstance;
  /** Tenant Alpha's agents: `onA` talks to the first instance, `onB` to the second. */
  let onA: Agent;
  let onB: Agent;

  beforeAll(async () => {
    app = await startAppServer("postgres");
    second = await app.startAnotherInstance();
    onA = await connectAgent(app.mcpUrl, app.tenantA.key);
    onB = await connectAgent(second.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    await onA?.close();
    await onB?.close();
    await app?.stop();
  });

  function submit(agent: Agent, planId: string, stepId: string, result: object = { ok: true }) {
    return agent.call("submit_step_result", {
      planId,
      stepId,
      result,
      resultSummary: "Done.",
      confidence: 0.8,
      stepExecutionReport: report,
    });
  }

  it("runs as two processes on two ports", () => {
    expect(second.port).not.toBe(app.port);
  });

  it("hands every step of a shared 40-step plan out exactly once across both instances", async () => {
    const plan = await onA.ok("create_research_plan", {
      name: "Shared by two instances",
      researchQuestion: "q",
      steps: Array.from({ length: STEPS }, (_, i) => ({
        stepType: "search",
        instructions: `Part ${i + 1}.`,
      })),
    });
    type HandOut = { stepId: string; attempt: number; instance: "A" | "B" };
    const handOuts: HandOut[] = [];
    const refusals: string[] = [];

    async function work(instance: "A" | "B", mcpUrl: string): Promise<string> {
      const agent = await connectAgent(mcpUrl, app.tenantA.key);
      try {
        const deadline = Date.now() + 90_000;
        while (Date.now() < deadline) {
          const next = await agent.ok("get_next_step", { planId: plan.planId });
          if (next.status === "plan_complete") return next.status;
          if (next.status === "no_pending_steps") {
            // The last steps are held by other agents: wait for them.
            await sleep(50);
            continue;
          }
          if (next.status !== "ready") return next.status;
          handOuts.push({ stepId: next.step.stepId, attempt: next.step.attempt, instance });
          const answer = await submit(agent, plan.planId, next.step.stepId, { by: instance });
          if (answer.isError) refusals.push(answer.text);
        }
        return "timed out";
      } finally {
        await agent.close();
      }
    }

    const outcomes = await Promise.all([
      ...Array.from({ length: AGENTS_PER_INSTANCE }, () => work("A", app.mcpUrl)),
      ...Array.from({ length: AGENTS_PER_INSTANCE }, () => work("B", second.mcpUrl)),
    ]);
    expect(outcomes).toEqual(Array(AGENTS_PER_INSTANCE * 2).fill("plan_complete"));
    expect(refusals).toEqual([]);
    const ids = handOuts.map((h) => h.stepId);
    expect(ids.length).toBe(STEPS);
    expect(new Set(ids).size).toBe(STEPS);
    expect(new Set(ids)).toEqual(new Set(plan.steps.map((s: { stepId: string }) => s.stepId)));
    expect(handOuts.every((h) => h.attempt === 1)).toBe(true);
    // Both instances did part of the work.
    expect(handOuts.some((h) => h.instance === "A")).toBe(true);
    expect(handOuts.some((h) => h.instance === "B")).toBe(true);

    for (const agent of [onA, onB]) {
      const status = await agent.ok("get_plan_status", { planId: plan.planId });
      expect(status.status).toBe("completed");
      expect(status.progress.percent).toBe(100);
    }
  }, 120_000);

  /** A plan whose first step waits at a checkpoint requested through instance A. */
  async function checkpointOnA(name: string) {
    const plan = await onA.ok("create_research_plan", {
      name,
      researchQuestion: "q",
      steps: [
        { stepType: "checkpoint", instructions: "Check with the user." },
        { stepType: "search", instructions: "Search." },
        { stepType: "synthesize", instructions: "Write." },
      ],
    });
    const first = await onA.ok("get_next_step", { planId: plan.planId });
    const review = await onA.ok("request_user_review", {
      planId: plan.planId,
      stepId: first.step.stepId,
      summary: "Found three sources. Go on?",
    });
    return { planId: plan.planId as string, stepId: first.step.stepId as string, review, plan };
  }

  it("shows a review requested on A and decided on B (over MCP) on A at once", async () => {
    const { planId, stepId, review, plan } = await checkpointOnA("Review across instances");
    // B sees the request that A wrote.
    const waiting = await onB.ok("get_next_step", { planId });
    expect(waiting).toMatchObject({
      status: "awaiting_review",
      review: { reviewRequestId: review.reviewRequestId, stepId },
    });

    // modify on B: A hands the step out again at once, with the feedback.
    const modified = await onB.ok("submit_user_decision", {
      planId,
      decision: "modify",
      feedback: "Add a primary source.",
      reviewRequestId: review.reviewRequestId,
    });
    expect(modified).toMatchObject({ planStatus: "executing", stepStatus: "in_progress" });
    const redo = await onA.ok("get_next_step", { planId });
    expect(redo.status).toBe("ready");
    expect(redo.step).toMatchObject({ stepId, attempt: 2 });
    expect(redo.step.instructions).toContain("User feedback: Add a primary source.");

    // A asks again; approve on B: A hands out step 2 at once.
    const again = await onA.ok("request_user_review", {
      planId,
      stepId,
      summary: "Added one.",
    });
    await onB.ok("submit_user_decision", {
      planId,
      decision: "approve",
      reviewRequestId: again.reviewRequestId,
    });
    const next = await onA.ok("get_next_step", { planId });
    expect(next.status).toBe("ready");
    expect(next.step).toMatchObject({ stepId: plan.steps[1].stepId, stepOrder: 2 });
    expect((await onA.ok("get_plan_status", { planId })).status).toBe("executing");

    // The same decision sent to both instances at once: one applies, the other is a CONFLICT.
    await submit(onA, planId, next.step.stepId);
    const third = await onA.ok("get_next_step", { planId });
    const last = await onA.ok("request_user_review", {
      planId,
      stepId: third.step.stepId,
      summary: "Final check.",
    });
    const raced = await Promise.all(
      [onA, onB].map((agent) =>
        agent.call("submit_user_decision", {
          planId,
          decision: "approve",
          reviewRequestId: last.reviewRequestId,
        }),
      ),
    );
    expect(raced.filter((answer) => !answer.isError)).toHaveLength(1);
    expect(raced.filter((answer) => answer.isError).map((answer) => answer.text)).toEqual([
      expect.stringMatching(/^CONFLICT: /),
    ]);
    for (const agent of [onA, onB]) {
      expect((await agent.ok("get_next_step", { planId })).status).toBe("plan_complete");
    }
  });

  it("shows a review decided in the web UI on B on A at once", async () => {
    const { planId, review, plan } = await checkpointOnA("Web review across instances");
    const reviewer = await signInOverHttp(second.url, app.tenantA.researcherEmail);
    const page = await reviewer.get(`/plans/${planId}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Found three sources. Go on?");
    const decided = await reviewer.action(`/plans/${planId}`, "decideReviewAction", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "skip",
      feedback: "Not needed.",
    });
    expect(decided.status).toBe(200);
    expect(decided.text).toContain("Skipped: the step will not run. The plan continues.");
    const next = await onA.ok("get_next_step", { planId });
    expect(next.status).toBe("ready");
    expect(next.step).toMatchObject({ stepId: plan.steps[1].stepId });
    const context = await onA.ok("get_research_context", { planId });
    expect(context.steps[0].status).toBe("skipped");
    expect(context.reviews[0].decision).toMatchObject({
      decision: "skip",
      feedback: "Not needed.",
      decidedBy: expect.stringContaining(app.tenantA.researcherEmail),
    });
  });

  it("refuses a key revoked in the web UI on B at once on B, and on A, which had remembered it too, once A hears of it", async () => {
    const handle = await app.openDatabase();
    const created = await createApiKey(handle.db, {
      email: app.tenantA.email,
      name: "revoked across instances",
    });
    await handle.close();
    // Each protocol era's client calls each instance twice: the second call
    // finds the key remembered there.
    const onInstance = async (mcpUrl: string) => [
      await connectAgent(mcpUrl, created.key),
      await connectModernAgent(mcpUrl, created.key),
    ];
    const onA = await onInstance(app.mcpUrl);
    const onB = await onInstance(second.mcpUrl);
    try {
      for (const agent of [...onA, ...onB]) {
        for (let i = 0; i < 2; i += 1) await agent.ok("list_active_plans", {});
      }
      const admin = await signInOverHttp(second.url, app.tenantA.email);
      const revoked = await admin.action("/admin/users", "revokeKeyAction", {
        apiKeyId: created.apiKeyId,
      });
      expect(revoked.text).toContain("Key revoked: it no longer works.");
      // B, which revoked it, forgot it before its answer: no wait.
      for (const agent of onB) {
        await expect(agent.call("list_active_plans", {})).rejects.toThrow(/401|Unauthorized/);
      }
      // A hears of it by the database's notification (docs/oauth.md,
      // "Revocation"), a moment after the commit, within which a call there
      // can still pass.
      for (const agent of onA) {
        await vi.waitFor(
          () => expect(agent.call("list_active_plans", {})).rejects.toThrow(/401|Unauthorized/),
          { timeout: 2_000, interval: 20 },
        );
      }
    } finally {
      await Promise.all([...onA, ...onB].map((agent) => agent.close().catch(() => {})));
    }
  });

  it("leaves audit trails that replay to every plan's steps", async () => {
    await app.stopServer();
    const handle = await app.openDatabase();
    try {
      const plans = await handle.db
        .select({ id: researchPlans.id, name: researchPlans.name, status: researchPlans.status })
        .from(researchPlans);
      expect(plans).toHaveLength(3);
      for (const plan of plans) {
        const steps = await handle.db
          .select({ id: planSteps.id, status: planSteps.status })
          .from(planSteps)
          .where(eq(planSteps.planId, plan.id));
        const rows = await handle.db
          .select({
            eventType: planAuditLog.eventType,
            stepId: planAuditLog.stepId,
            payload: planAuditLog.payload,
          })
          .from(planAuditLog)
          .where(eq(planAuditLog.planId, plan.id))
          .orderBy(asc(planAuditLog.seq));
        expect(replayAudit(steps, rows), plan.name).toEqual([]);
        if (plan.name === "Shared by two instances") {
          expect(plan.status).toBe("completed");
          const count = (type: string) => rows.filter((r) => r.eventType === type).length;
          expect(count("step_started")).toBe(STEPS);
          expect(count("step_completed")).toBe(STEPS);
        }
      }
    } finally {
      await handle.close();
    }
  });
});
