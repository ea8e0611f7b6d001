/**
 * PostgreSQL itself crashing under the loop: an immediate shutdown (no
 * checkpoint; WAL not yet flushed is lost) and recovery from the WAL. A
 * hand-out commits without waiting for its WAL flush
 * (lib/services/loop/claim-next-step.ts), so the crash may forget the last
 * ones; a result commits synchronously, so none that was acknowledged may be
 * lost. This checks both, and that a forgotten hand-out's holder still gets
 * its result accepted and every plan finishes with a trail that replays.
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
    // Nothing but a synchronous commit flushes the WAL before the crash: the
    // WAL writer waits its longest, and no autovacuum or background writer
    // writes in between, so what the crash loses is what the hand-outs risk.
    pg = await startPostgres([
      "wal_writer_delay=10000",
      "autovacuum=off",
      "bgwriter_lru_maxpages=0",
    ]);
  });
  afterAll(async () => {
    await handle?.close();
    pg?.stop();
  });

  it("keeps every acknowledged result, and a hand-out it forgot is still answered", async () => {
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    await admin.unsafe("create database cairn_crash");
    await admin.end();
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

    // No acknowledged result is lost.
    const first = await handle.db
      .select({ id: planSteps.id, status: planSteps.status, result: planSteps.result })
      .from(planSteps)
      .where(inArray(planSteps.id, firstSteps));
    expect(new Map(first.map((s) => [s.id, [s.status, s.result]]))).toEqual(
      new Map(firstSteps.map((id, i) => [id, ["completed", { token: `first-${i}` }]])),
    );
    // Each hand-out was kept (in progress) or forgotten (pending again), and the
    // crash forgot some: they committed without waiting for their flush.
    const second = await handle.db
      .select({ status: planSteps.status })
      .from(planSteps)
      .where(inArray(planSteps.id, handedOut));
    const forgotten = second.filter((s) => s.status === "pending").length;
    expect(second.filter((s) => s.status === "in_progress").length + forgotten).toBe(PLANS);
    expect(forgotten).toBeGreaterThan(0);

    // Every holder's result is accepted, kept hand-out or forgotten.
    for (const [i, planId] of plans.entries()) {
      await agent.submit(planId, handedOut[i] as string, { result: { token: `second-${i}` } });
    }
    const started = await handle.db
      .select({ payload: planAuditLog.payload })
      .from(planAuditLog)
      .where(
        and(inArray(planAuditLog.stepId, handedOut), eq(planAuditLog.eventType, "step_started")),
      );
    // A kept hand-out's step_started row survived; a forgotten one's went with
    // it, and its result started the step, as the trail says.
    expect(started).toHaveLength(PLANS);
    expect(started.filter((row) => row.payload.autoStarted === true)).toHaveLength(forgotten);

    // And every plan finishes, with a trail that replays against its steps.
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
