/**
 * A primary failing over to its synchronous standby under the loop, on
 * PostgreSQL 15: agents run plans through a multi-host DATABASE_URL with
 * target_session_attrs=primary; the primary's postmaster is killed (SIGKILL),
 * and the standby promoted a little later, its synchronous names cleared as a
 * failover manager does. In the window every call answers the retryable
 * DATABASE_UNAVAILABLE (never an internal error, never a hang); afterwards
 * every acknowledged plan, hand-out and result is there, no step was handed out
 * twice, every plan finishes and every trail verifies. The time from the
 * promote to the first acknowledged write is reported. And a write a standby
 * refuses is the same retryable error, its connections dropped.
 *
 * In process (the use cases on the client), and over /api/mcp as agents meet
 * it: the production server given both hosts, agents on the MCP SDK client,
 * which see in the window only the tool error DATABASE_UNAVAILABLE or HTTP 503
 * with Retry-After (never a 500, INTERNAL_ERROR or a hang) and retry on it.
 * There the server's review scheduler and notifier, ticking through the
 * window, carry on by themselves on the new primary: a review whose
 * deadline passes after the promote is applied, and its review.timed_out
 * webhook delivered, without a restart.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { tenants } from "@/lib/db/schema";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { toolError } from "@/lib/mcp/tool-result";
import { createWebhookEndpoint } from "@/lib/services/notifications/webhooks";
import { type AppServer, startAppServer } from "./support/app-server";
import { inProcessAgent, tenantContext } from "./support/in-process";
import { connectAgent } from "./support/mcp-client";
import {
  connectRetryingAgent,
  expectEverythingKept,
  type HttpAnswers,
  newPlanRun,
  type PlanRun,
  runPlans,
} from "./support/plan-runs";
import { type ReplicatedPostgres, startReplicatedPostgres } from "./support/replicated-postgres";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver";

// The operator's setting, for the endpoint registered here and the server
// (which inherits this environment): the webhook receiver is on 127.0.0.1.
process.env.CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES = "127.0.0.1";

const AGENTS = 8;
const PLANS_EACH = 3;
const STEPS = 10;
/** The window between losing the primary and the promote. */
const WINDOW_MS = 2_000;
/**
 * How long a call may keep failing: past Cairn's 35 s client deadline, since
 * in about one run in five a statement or a wait for a connection caught by
 * the failover has no answer until that deadline ends it (lib/db/postgres-client.ts).
 */
const GIVE_UP_MS = 45_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Once the run has 40 results: the primary killed, the standby promoted
 * WINDOW_MS later; waits for the run to end. Returns the time from the promote
 * to the first acknowledged write after it (ms).
 */
async function failOverUnder(pair: ReplicatedPostgres, run: PlanRun, running: Promise<unknown>) {
  while (run.results.size < 40) await sleep(20);
  pair.failPrimary();
  await sleep(WINDOW_MS);
  const promotedAt = Date.now();
  await pair.promote();
  await running;
  return Math.min(...run.writtenAt.filter((at) => at >= promotedAt)) - promotedAt;
}

describe("a primary failing over to its synchronous standby", () => {
  let pair: ReplicatedPostgres;
  let handle: DatabaseHandle | undefined;

  beforeAll(async () => {
    pair = await startReplicatedPostgres("cairn_failover");
    handle = await openDatabase({ kind: "postgres", url: pair.url("cairn_failover", "primary") });
    await handle.migrate();
  });
  afterAll(async () => {
    try {
      await handle?.close();
    } finally {
      pair?.stop();
    }
  });

  it("answers a write a standby refused as DATABASE_UNAVAILABLE, and reconnects", async () => {
    // A DATABASE_URL that reaches a standby: a single host demoted, or
    // target_session_attrs=read-write, which a PostgreSQL 15 standby passes.
    // Its tables are there: the migrations replayed.
    await pair.standbyCaughtUp();
    const standby = await openDatabase({
      kind: "postgres",
      url: pair.standbyUrl("cairn_failover"),
    });
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const refused = await standby.db
        .insert(tenants)
        .values({ name: "On the standby" })
        .catch((error: unknown) => error);
      expect(isDatabaseUnavailable(refused)).toBe(true);
      expect(toolError(refused).errorCode).toBe("DATABASE_UNAVAILABLE");
      expect(
        warn.mock.calls.some(([line]) => String(line).includes("reconnecting to find the primary")),
      ).toBe(true);
    } finally {
      warn.mockRestore();
      await standby.close();
    }
  });

  it("serves again within seconds of the promote, with nothing lost or handed out twice", async () => {
    if (!handle) throw new Error("no database");
    // A hand-out stored whose answer was lost is handed out again after its lease.
    const ctx = await tenantContext(handle.db, "Failover", { stepLeaseSeconds: 3 });
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const run = newPlanRun();
      const running = runPlans(
        () => inProcessAgent(ctx),
        { agents: AGENTS, plansEach: PLANS_EACH, steps: STEPS, giveUpMs: GIVE_UP_MS },
        run,
      );
      const firstWrite = await failOverUnder(pair, run, running);
      console.info(
        `Failover: first acknowledged write ${firstWrite} ms after the promote; ${run.errors.length} calls answered DATABASE_UNAVAILABLE and were retried.`,
      );
      expect(firstWrite).toBeLessThan(10_000);
      expect(run.errors.length).toBeGreaterThan(0);
      expect(run.plans.length).toBe(AGENTS * PLANS_EACH);
      await expectEverythingKept(handle.db, run, STEPS);
    } finally {
      warn.mockRestore();
    }
  });
});

describe("over /api/mcp, the production server failing over to the standby", () => {
  let pair: ReplicatedPostgres;
  let app: AppServer | undefined;
  let receiver: WebhookReceiver | undefined;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    pair = await startReplicatedPostgres("cairn_failover_mcp");
    app = await startAppServer("postgres", {
      databaseUrl: pair.url("cairn_failover_mcp", "primary"),
      env: {
        // A hand-out stored whose answer was lost is handed out again after its lease.
        CAIRN_STEP_LEASE_SECONDS: "3",
        // Both timers tick several times in the window (their passes there
        // fail, or wait for a primary).
        CAIRN_SCHEDULER_INTERVAL_MS: "500",
        CAIRN_NOTIFY_INTERVAL_MS: "500",
      },
    });
    const direct = await app.openDatabase();
    try {
      await createWebhookEndpoint(
        {
          db: direct.db,
          tenantId: app.tenantA.tenantId,
          actor: { type: "system", id: null, label: "test" },
          stallThresholdSeconds: 1800,
        },
        {
          url: receiver.url,
          events: ["review.timed_out"],
        },
      );
    } finally {
      await direct.close();
    }
  });
  afterAll(async () => {
    try {
      await app?.stop();
      await receiver?.close();
    } finally {
      pair?.stop();
    }
  });

  it("answers only the retryable error in the window, serves again within seconds, loses nothing, and its timers carry on", async () => {
    if (!app) throw new Error("no server");
    const seen: HttpAnswers = { statuses: [], retryAfter: [] };
    const agents = await Promise.all(
      Array.from({ length: AGENTS }, () =>
        connectRetryingAgent(app?.mcpUrl ?? "", app?.tenantA.key ?? "", seen),
      ),
    );
    const run = newPlanRun();
    let firstWrite: number;
    try {
      const running = runPlans(
        (index) => agents[index] as (typeof agents)[number],
        { agents: AGENTS, plansEach: PLANS_EACH, steps: STEPS, giveUpMs: GIVE_UP_MS },
        run,
      );
      firstWrite = await failOverUnder(pair, run, running);
    } finally {
      await Promise.all(agents.map((agent) => agent.close()));
    }
    const refused = seen.statuses.filter((status) => status === 503).length;
    console.info(
      `Failover over MCP: first acknowledged write ${firstWrite} ms after the promote; ${run.errors.length} calls answered DATABASE_UNAVAILABLE (${refused} of them HTTP 503) and were retried.`,
    );
    expect(firstWrite).toBeLessThan(10_000);
    expect(run.errors.length).toBeGreaterThan(0);
    // runPlans failed on any other tool error or thrown answer; no other server error either.
    expect(seen.statuses.filter((status) => status >= 500 && status !== 503)).toEqual([]);
    expect(seen.retryAfter.filter((seconds) => seconds !== "2")).toEqual([]);
    expect(run.plans.length).toBe(AGENTS * PLANS_EACH);
    const direct = await app.openDatabase();
    try {
      await expectEverythingKept(direct.db, run, STEPS);
    } finally {
      await direct.close();
    }

    // Nothing was logged as unexpected (an error with its stack), an uncaught
    // exception included.
    expect(app.serverOutput()).not.toMatch(/^\s+at /m);

    // A review whose deadline passes after the promote: the scheduler applies
    // it and the notifier sends its webhook, with no call to trigger either.
    const agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    try {
      const { planId } = await agent.ok("create_research_plan", {
        name: "After the failover",
        researchQuestion: "q",
        steps: [
          { stepType: "checkpoint", instructions: "Check." },
          { stepType: "synthesize", instructions: "Write." },
        ],
      });
      const next = await agent.ok("get_next_step", { planId });
      const asked = await agent.ok("request_user_review", {
        planId,
        stepId: next.step.stepId,
        summary: "Anyone?",
        deadlineSeconds: 1,
        onTimeout: "approve",
      });
      // A pass caught mid-statement by the failover may hold its timer until the deadline ends it.
      const poll = { timeout: GIVE_UP_MS, interval: 200 };
      await expect
        .poll(
          () =>
            receiver?.received.some(
              ({ body }) => body.includes("review.timed_out") && body.includes(planId),
            ),
          poll,
        )
        .toBe(true);
      console.info(
        `Failover over MCP: the review's review.timed_out webhook arrived ${Date.now() - Date.parse(asked.dueAt)} ms after its deadline.`,
      );
      // get_research_context reads without applying deadlines: the scheduler decided.
      const context = await agent.ok("get_research_context", { planId });
      expect(context.reviews[0]?.decision?.decidedBy).toBe("Cairn (deadline)");
    } finally {
      await agent.close();
    }
  }, 120_000);
});
