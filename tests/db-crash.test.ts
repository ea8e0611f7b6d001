/**
 * PostgreSQL itself crashing under the loop: an immediate shutdown (its
 * processes killed; WAL still in its buffers is lost) and recovery from the
 * WAL. Every answer Cairn gave must survive it: a result it acknowledged, and a
 * hand-out too, since the holder of a handed-out step was told the step is its
 * own until its lease runs out (and a reader may already have seen the
 * hand-out's chained audit row). So the loop's hand-outs and results commit
 * synchronously; each round below ends with one kind of them and then crashes,
 * with the WAL writer stopped first, so that a write of that kind that stopped
 * waiting for its flush is lost for certain, as a hand-out briefly was
 * (docs/performance.md).
 *
 * PostgreSQL only: PGlite runs inside the app's process, so its crash is the
 * app's (tests/loop-crash.test.ts).
 */
import { and, eq, inArray } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { planAuditLog, planSteps } from "@/lib/db/schema";
import { verifyAllTrails } from "@/lib/services/audit/audit-chain";
import { trailFailure } from "@/lib/services/audit/chain-verifier";
import { storedAuditProblems } from "./support/audit-replay";
import {
  type InProcessAgent,
  inProcessAgent,
  tenantContext,
  planSteps as typedSteps,
} from "./support/in-process";
import { type PostgresServer, startPostgres } from "./support/postgres-server";

const PLANS = 3;

describe("PostgreSQL crashing under the loop", () => {
  let pg: PostgresServer;
  let url: string;
  let handle: DatabaseHandle | undefined;

  beforeAll(async () => {
    // Nothing else writes the WAL out in the test's window: no autovacuum, no
    // background writer flushing the WAL to write a dirty page, no timed
    // checkpoint.
    pg = await startPostgres([
      "autovacuum=off",
      "bgwriter_lru_maxpages=0",
      "checkpoint_timeout=1h",
    ]);
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe("create database cairn_crash");
    } finally {
      await admin.end();
    }
    url = pg.url.replace(/\/[^/]*$/, "/cairn_crash");
  });
  afterAll(async () => {
    try {
      await handle?.close();
    } finally {
      pg?.stop();
    }
  });

  /** Stops the WAL writer: from then on only a commit that waits for its own flush reaches the disk. */
  async function stopWalWriter() {
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const [walWriter] = await admin<{ pid: number }[]>`
        select pid from pg_stat_activity where backend_type = 'walwriter'`;
      if (!walWriter) throw new Error("No WAL writer in pg_stat_activity.");
      process.kill(walWriter.pid, "SIGSTOP");
    } finally {
      await admin.end();
    }
  }

  /**
   * Crashes the server (the stopped WAL writer is killed with the rest) and
   * opens the database again once it has recovered; the agent's calls then go there.
   */
  async function crash(agent: InProcessAgent): Promise<{ db: DatabaseHandle["db"] }> {
    pg.crashAndRestart();
    await handle?.close().catch(() => {});
    handle = await openDatabase({ kind: "postgres", url });
    agent.ctx.db = handle.db;
    return { db: handle.db };
  }

  const stepsOf = async (db: DatabaseHandle["db"], ids: string[]) =>
    new Map(
      (
        await db
          .select({
            id: planSteps.id,
            status: planSteps.status,
            attempt: planSteps.attempt,
            result: planSteps.result,
          })
          .from(planSteps)
          .where(inArray(planSteps.id, ids))
      ).map(({ id, ...step }) => [id, step]),
    );

  it("keeps every acknowledged hand-out and result, and every plan finishes", async () => {
    handle = await openDatabase({ kind: "postgres", url });
    await handle.migrate();
    const agent = inProcessAgent(await tenantContext(handle.db, "Alpha"));
    const plans: string[] = [];
    for (let i = 0; i < PLANS; i += 1) {
      const plan = await agent.ok("create_research_plan", {
        name: `Crash ${i}`,
        researchQuestion: "q",
        steps: typedSteps("search", "analyze", "synthesize"),
      });
      plans.push(plan.planId);
    }
    const handOut = async () => {
      const stepIds: string[] = [];
      for (const planId of plans) {
        const next = await agent.ok("get_next_step", { planId });
        if (next.status !== "ready" || !next.step) throw new Error(`${planId}: ${next.status}`);
        stepIds.push(next.step.stepId);
      }
      return stepIds;
    };
    const answer = async (stepIds: string[], round: string) => {
      for (const [i, planId] of plans.entries()) {
        await agent.submit(planId, stepIds[i] as string, { result: { token: `${round}-${i}` } });
      }
    };

    // Round 1 ends with hand-outs: each plan's second step, claimed in one
    // statement (the first hand-out, which starts the plan, and its answer come before).
    await answer(await handOut(), "first");
    await stopWalWriter();
    const handedOut = await handOut();
    let { db } = await crash(agent);
    expect(await stepsOf(db, handedOut)).toEqual(
      new Map(handedOut.map((id) => [id, { status: "in_progress", attempt: 1, result: null }])),
    );
    const started = await db
      .select({ stepId: planAuditLog.stepId })
      .from(planAuditLog)
      .where(
        and(inArray(planAuditLog.stepId, handedOut), eq(planAuditLog.eventType, "step_started")),
      );
    expect(started.map((row) => row.stepId).sort()).toEqual([...handedOut].sort());

    // Round 2 ends with results: the holders of those hand-outs answer.
    await stopWalWriter();
    await answer(handedOut, "second");
    ({ db } = await crash(agent));
    expect(await stepsOf(db, handedOut)).toEqual(
      new Map(
        handedOut.map((id, i) => [
          id,
          { status: "completed", attempt: 1, result: { token: `second-${i}` } },
        ]),
      ),
    );

    // Every plan finishes, with a trail that replays against its steps.
    for (const planId of plans) {
      for (;;) {
        const next = await agent.ok("get_next_step", { planId });
        if (next.status === "plan_complete") break;
        if (next.status !== "ready" || !next.step) throw new Error(`${planId}: ${next.status}`);
        await agent.submit(planId, next.step.stepId);
      }
    }
    expect(await storedAuditProblems(db, plans)).toEqual({});
    // And each trail's hash chain, recovered from the WAL with its head, still ends at its head.
    for (const result of await verifyAllTrails(db)) {
      expect(trailFailure(result)).toBeUndefined();
      expect(result.verified).toBe(true);
    }
  });
});
