import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planSteps, researchPlans } from "@/lib/db/schema";
import { type AppServer, startAppServer } from "./support/app-server";
import { storedAuditProblems } from "./support/audit-replay";
import { BACKENDS } from "./support/databases";
import { connectAgent, report } from "./support/mcp-client";

const AGENTS = 8;
const STEPS = 6;
const LEASE_SECONDS = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BACKENDS)("a server killed mid-run on %s", (backend) => {
  let app: AppServer;

  beforeAll(async () => {
    app = await startAppServer(backend, {
      env: { CAIRN_STEP_LEASE_SECONDS: String(LEASE_SECONDS) },
    });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("loses no acknowledged result and finishes every plan after a restart", async () => {
    const setup = await connectAgent(app.mcpUrl, app.tenantA.key);
    const plans: string[] = [];
    for (let i = 0; i < AGENTS; i += 1) {
      const plan = await setup.ok("create_research_plan", {
        name: `Crash ${i}`,
        researchQuestion: "q",
        steps: Array.from({ length: STEPS }, (_, n) => ({
          stepType: "search",
          instructions: `Step ${n + 1}.`,
        })),
      });
      plans.push(plan.planId);
    }
    await setup.close();

    /** stepId -> the token of the result the server acknowledged. */
    const acknowledged = new Map<string, string>();
    let stop = false;

    /** One agent's loop on its plan, until it completes, `stop` is set, or a call fails. */
    async function work(planId: string, label: string, deadline: number) {
      const agent = await connectAgent(app.mcpUrl, app.tenantA.key);
      try {
        let n = 0;
        while (!stop && Date.now() < deadline) {
          const next = await agent.ok("get_next_step", { planId });
          if (next.status === "plan_complete") return "complete";
          if (next.status !== "ready") {
            await sleep(200);
            continue;
          }
          n += 1;
          const token = `${label}-${n}`;
          const answer = await agent.call("submit_step_result", {
            planId,
            stepId: next.step.stepId,
            result: { token },
            stepExecutionReport: report,
          });
          if (!answer.isError) acknowledged.set(next.step.stepId, token);
          else expect(answer.text).toMatch(/^CONFLICT: /);
        }
        return "stopped";
      } finally {
        await agent.close().catch(() => {});
      }
    }

    // Before the crash: the agents run until the server dies under them.
    // Settled at once, so the calls the crash cuts off are handled when they fail.
    const before = Promise.allSettled(
      plans.map((planId, i) => work(planId, `before-${i}`, Date.now() + 60_000)),
    );
    await sleep(1_500);
    expect(acknowledged.size).toBeGreaterThan(0);
    await app.crashAndRestart();
    stop = true;
    const outcomes = await before;
    // Some agents were cut off mid-call; the others stopped cleanly.
    expect(outcomes.length).toBe(AGENTS);

    // After the restart: new sessions finish every plan.
    stop = false;
    const after = await Promise.all(
      plans.map((planId, i) => work(planId, `after-${i}`, Date.now() + 60_000)),
    );
    expect(after).toEqual(Array(AGENTS).fill("complete"));

    await app.stopServer();
    const handle = await app.openDatabase();
    try {
      const steps = await handle.db
        .select({
          id: planSteps.id,
          planId: planSteps.planId,
          status: planSteps.status,
          result: planSteps.result,
        })
        .from(planSteps);
      for (const [stepId, token] of acknowledged) {
        const step = steps.find((s) => s.id === stepId);
        expect(step?.status, stepId).toBe("completed");
        expect(step?.result, stepId).toEqual({ token });
      }
      const stored = await handle.db.select({ status: researchPlans.status }).from(researchPlans);
      expect(stored.map((p) => p.status)).toEqual(Array(AGENTS).fill("completed"));
      expect(await storedAuditProblems(handle.db, plans)).toEqual({});
    } finally {
      await handle.close();
    }
  }, 180_000);
});
