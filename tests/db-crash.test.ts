/**
 * PostgreSQL itself crashing under the loop: an immediate shutdown (no
 * checkpoint; WAL not yet flushed is lost) and recovery from the WAL. Every
 * answer Cairn gave must survive it: a result it acknowledged, and a hand-out
 * too, since the holder of a handed-out step was told the step is its own
 * until its lease runs out (and a reader may already have seen the hand-out's
 * chained audit row). So every write of the loop commits synchronously; this
 * fails if one stops waiting for its WAL flush, as a hand-out briefly did
 * (README, Performance).
 *
 * PostgreSQL only: PGlite runs inside the app's process, so its crash is the
 * app's (tests/loop-crash.test.ts).
 */
import { and, eq, inArray } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { planAuditLog, planSteps } from "@/lib/db/schema";
import { storedAuditProblems } from "./support/audit-replay";
import { inProcessAgent, tenantContext, planSteps as typedSteps } from "./support/in-process";
import { type PostgresServer, startPostgres } from "./support/postgres-server";

const PLANS = 3;

describe("PostgreSQL crashing under the loop", () => {
  let pg: PostgresServer;
  let handle: DatabaseHandle | undefined;

  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(async () => {
    await handle?.close();
    pg?.stop();
  });

  it("keeps every acknowledged result and hand-out, and every plan finishes", async () => {
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    await admin.unsafe("create database cairn_crash");
    const url = pg.url.replace(/\/[^/]*$/, "/cairn_crash");
    handle = await openDatabase({ kind: "postgres", url });
    await handle.migrate();
    const ctx = await tenantContext(handle.db, "Alpha");
    let agent = inProcessAgent(ctx);

    const plans: string[] = [];
    for (let i = 0; i < PLANS; i += 1) {
      const plan = await agent.ok("create_research_plan", {
        name: `Crash ${i}`,
        researchQuestion: "q",
        steps: typedSteps("search", "analyze", "synthesize"),
      });
      plans.push(plan.planId);
    }
    // Each plan's first step answered: acknowledged results.
    const firstSteps: string[] = [];
    for (const [i, planId] of plans.entries()) {
      const next = await agent.ok("get_next_step", { planId });
      if (next.status !== "ready" || !next.step) throw new Error(`plan ${i}: ${next.status}`);
      firstSteps.push(next.step.stepId);
      await agent.submit(planId, next.step.stepId, { result: { token: `first-${i}` } });
    }
    // The WAL writer stopped: from here on, only a commit that waits for its
    // own flush reaches the disk, so a write that did not wait is lost for
    // certain in the crash below, wherever its WAL falls on a page.
    const [walWriter] = await admin<{ pid: number }[]>`
      select pid from pg_stat_activity where backend_type = 'walwriter'`;
    if (!walWriter) throw new Error("No WAL writer in pg_stat_activity.");
    process.kill(walWriter.pid, "SIGSTOP");
    await admin.end();
    // Then each plan's second step handed out, and nothing after it but the crash.
    const handedOut: string[] = [];
    for (const planId of plans) {
      const next = await agent.ok("get_next_step", { planId });
      if (next.status !== "ready" || !next.step) throw new Error(`plan ${planId}: ${next.status}`);
      handedOut.push(next.step.stepId);
    }

    pg.crashAndRestart();
    await handle.close().catch(() => {});
    handle = await openDatabase({ kind: "postgres", url });
    agent = inProcessAgent({ ...ctx, db: handle.db });

    const first = await handle.db
      .select({ id: planSteps.id, status: planSteps.status, result: planSteps.result })
      .from(planSteps)
      .where(inArray(planSteps.id, firstSteps));
    expect(new Map(first.map((s) => [s.id, [s.status, s.result]]))).toEqual(
      new Map(firstSteps.map((id, i) => [id, ["completed", { token: `first-${i}` }]])),
    );
    const second = await handle.db
      .select({ id: planSteps.id, status: planSteps.status, attempt: planSteps.attempt })
      .from(planSteps)
      .where(inArray(planSteps.id, handedOut));
    expect(new Map(second.map((s) => [s.id, [s.status, s.attempt]]))).toEqual(
      new Map(handedOut.map((id) => [id, ["in_progress", 1]])),
    );
    const started = await handle.db
      .select({ stepId: planAuditLog.stepId })
      .from(planAuditLog)
      .where(
        and(inArray(planAuditLog.stepId, handedOut), eq(planAuditLog.eventType, "step_started")),
      );
    expect(started.map((row) => row.stepId).sort()).toEqual([...handedOut].sort());

    // The holders answer, and every plan finishes with a trail that replays.
    for (const [i, planId] of plans.entries()) {
      await agent.submit(planId, handedOut[i] as string, { result: { token: `second-${i}` } });
    }
    for (const planId of plans) {
      for (;;) {
        const next = await agent.ok("get_next_step", { planId });
        if (next.status === "plan_complete") break;
        if (next.status !== "ready" || !next.step)
          throw new Error(`plan ${planId}: ${next.status}`);
        await agent.submit(planId, next.step.stepId);
      }
    }
    expect(await storedAuditProblems(handle.db, plans)).toEqual({});
  });
});
