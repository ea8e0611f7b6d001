/**
 * Review deadlines in the production server (docs/reviews.md): a review that
 * falls due while the server is down is applied by the scheduler's first tick
 * after the restart (on PGlite and PostgreSQL 15), and two instances ticking
 * on one PostgreSQL database apply each due review exactly once.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notificationEvents, planAuditLog, reviewDecisions } from "@/lib/db/schema";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { type Agent, connectAgent } from "./support/mcp-client";

const POLL = { timeout: 30_000, interval: 200 };

async function reviewWithDeadline(agent: Agent, name: string, onTimeout: string) {
  const plan = await agent.ok("create_research_plan", {
    name,
    researchQuestion: "q",
    steps: [
      { stepType: "checkpoint", instructions: "Check." },
      { stepType: "synthesize", instructions: "Write." },
    ],
  });
  const next = await agent.ok("get_next_step", { planId: plan.planId });
  const asked = await agent.ok("request_user_review", {
    planId: plan.planId,
    stepId: next.step.stepId,
    summary: "Anyone?",
    deadlineSeconds: 1,
    onTimeout,
  });
  return { planId: plan.planId as string, dueAt: asked.dueAt as string };
}

describe.each(BACKENDS)("a restart while a review is due, on %s", (backend) => {
  let app: AppServer;

  beforeAll(async () => {
    // An hour between ticks: only the tick at start can apply the deadline.
    app = await startAppServer(backend, { env: { CAIRN_SCHEDULER_INTERVAL_MS: "3600000" } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("applies it at start", async () => {
    const agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    const { planId, dueAt } = await reviewWithDeadline(agent, "Due while down", "approve");
    await agent.close();
    await expect.poll(() => Date.now() > Date.parse(dueAt), POLL).toBe(true);

    await app.crashAndRestart();
    const after = await connectAgent(app.mcpUrl, app.tenantA.key);
    try {
      // get_research_context reads without applying deadlines: only the scheduler decides here.
      await expect
        .poll(async () => {
          const context = await after.ok("get_research_context", { planId });
          return context.reviews[0]?.decision?.decidedBy ?? null;
        }, POLL)
        .toBe("Cairn (deadline)");
      const next = await after.ok("get_next_step", { planId });
      expect(next.status).toBe("ready");
      expect(next.reviewTimedOut).toMatchObject({ action: "approve" });
    } finally {
      await after.close();
    }
  });
});

describe("two instances ticking on one PostgreSQL database", () => {
  let app: AppServer;

  beforeAll(async () => {
    app = await startAppServer("postgres", { env: { CAIRN_SCHEDULER_INTERVAL_MS: "200" } });
    await app.startAnotherInstance();
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("applies each due review exactly once", async () => {
    const agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    const plans: string[] = [];
    try {
      for (let i = 0; i < 5; i += 1) {
        plans.push((await reviewWithDeadline(agent, `Shared ${i}`, "skip")).planId);
      }
    } finally {
      await agent.close();
    }
    const handle = await app.openDatabase();
    try {
      await expect
        .poll(async () => (await handle.db.select().from(reviewDecisions)).length, POLL)
        .toBe(plans.length);
      for (const planId of plans) {
        const rows = await handle.db
          .select()
          .from(planAuditLog)
          .where(eq(planAuditLog.planId, planId));
        const decided = rows.filter((row) => row.payload.action === "decision");
        expect(decided, planId).toHaveLength(1);
        expect(decided[0]).toMatchObject({ actorType: "system", actorLabel: "Cairn (deadline)" });
      }
      const timedOut = (await handle.db.select().from(notificationEvents)).filter(
        (row) => row.event === "review.timed_out",
      );
      expect(timedOut).toHaveLength(plans.length);
    } finally {
      await handle.close();
    }
  });
});
