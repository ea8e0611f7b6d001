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
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { tenants } from "@/lib/db/schema";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { toolError } from "@/lib/mcp/tool-result";
import { inProcessAgent, tenantContext } from "./support/in-process";
import { expectEverythingKept, newPlanRun, runPlans } from "./support/plan-runs";
import { type ReplicatedPostgres, startReplicatedPostgres } from "./support/replicated-postgres";

const AGENTS = 8;
const PLANS_EACH = 3;
const STEPS = 10;
/** The window between losing the primary and the promote. */
const WINDOW_MS = 2_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
        { agents: AGENTS, plansEach: PLANS_EACH, steps: STEPS, giveUpMs: 30_000 },
        run,
      );
      while (run.results.size < 40) await sleep(20);
      pair.failPrimary();
      await sleep(WINDOW_MS);
      const promotedAt = Date.now();
      await pair.promote();
      await running;

      const firstWrite = Math.min(...run.writtenAt.filter((at) => at >= promotedAt)) - promotedAt;
      console.info(
        `Failover: first acknowledged write ${firstWrite} ms after the promote; ${run.errors.length} calls answered DATABASE_UNAVAILABLE and were retried; ${run.storedBeforeAnswer} results were found stored on the retry.`,
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
