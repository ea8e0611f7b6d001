/**
 * Cairn behind a transaction pooler (Debian's PgBouncer 1.18 in transaction
 * mode, which cannot carry named prepared statements), with fewer server
 * connections than Cairn opens, so consecutive statements of one Cairn
 * connection land on different server connections. Agents run plans to the end:
 *
 * - with CAIRN_PREPARED_STATEMENTS=off, every call succeeds and nothing is lost;
 * - with the stock setting, no call reports success for a write that was not
 *   kept (postgres.js's own `commit` was a named statement, answered with a
 *   silent ROLLBACK there): Cairn finds the pooler when it opens, says what to
 *   set and sends its statements unprepared.
 *
 * In process (the use cases on a pooled client) and over /api/mcp (the
 * production server given the pooler's URL, agents on the MCP SDK client).
 *
 * On PostgreSQL itself: a commit answered with ROLLBACK is an error, a
 * transaction whose connection closes fails at once with a retryable error, and a
 * prepared statement the server lost (a pooler Cairn did not find when it
 * opened) turns prepared statements off from then on.
 *
 * Behind the pooler the MCP door remembers no credential (it hears no
 * notification there), so a key revoked is refused at once.
 *
 * And off means off: no statement Cairn sends, the loop's fixed ones included,
 * is left prepared on the server.
 */
import { eq, sql } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from "vitest";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { apiKeys, tenants } from "@/lib/db/schema";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { createPlan } from "@/lib/services/plans/create-plan";
import { getNextStep } from "@/lib/services/plans/get-next-step";
import { getPlanStatus } from "@/lib/services/plans/get-plan-status";
import { submitStepResult } from "@/lib/services/plans/submit-step-result";
import { startAppServer } from "./support/app-server";
import { createPostgresDatabase, testPostgresUrl } from "./support/databases";
import { inProcessAgent, planSteps, tenantContext } from "./support/in-process";
import { type Agent, connectAgent, report } from "./support/mcp-client";
import { type PgBouncer, startPgBouncer } from "./support/pgbouncer";
import { expectEverythingKept, runPlans } from "./support/plan-runs";
import { readRows } from "./support/rows";

const AGENTS = 8;
const PLANS_EACH = 3;
const STEPS = 10;

describe("behind PgBouncer in transaction mode", () => {
  let bouncer: PgBouncer;
  let directUrl: string;
  let handle: DatabaseHandle | undefined;

  beforeAll(async () => {
    directUrl = await createPostgresDatabase();
    const direct = await openDatabase({ kind: "postgres", url: directUrl });
    try {
      await direct.migrate();
    } finally {
      await direct.close();
    }
    bouncer = await startPgBouncer({ serverUrl: directUrl, poolMode: "transaction", poolSize: 3 });
  });
  afterAll(async () => {
    await handle?.close();
    await bouncer?.stop();
  });

  async function runThroughBouncer(preparedStatements: boolean, tenant: string) {
    handle = await openDatabase({ kind: "postgres", url: bouncer.url, preparedStatements });
    const ctx = await tenantContext(handle.db, tenant);
    const run = await runPlans(() => inProcessAgent(ctx), {
      agents: AGENTS,
      plansEach: PLANS_EACH,
      steps: STEPS,
    });
    return { run, db: handle.db };
  }

  it("with CAIRN_PREPARED_STATEMENTS=off: every plan done, no error, nothing lost", async () => {
    const { run, db } = await runThroughBouncer(false, "Off");
    expect(run.errors).toEqual([]);
    expect(run.plans.length).toBe(AGENTS * PLANS_EACH);
    await expectEverythingKept(db, run, STEPS);
    await handle?.close();
    handle = undefined;
  });

  it("with eight agents on one plan, each submit behind another's lock keeps its result and the plan ends once", async () => {
    // Most submits here find the plan held and go again behind the plan's
    // lock in one statement of their own (complete-step-guarded.ts).
    handle = await openDatabase({ kind: "postgres", url: bouncer.url, preparedStatements: false });
    const ctx = await tenantContext(handle.db, "Shared");
    const steps = 40;
    const { planId } = await createPlan(ctx, {
      name: "Shared behind the pooler",
      researchQuestion: "q",
      steps: Array.from({ length: steps }, (_, i) => ({
        stepType: "search" as const,
        instructions: `part ${i + 1}`,
      })),
    });
    const submitted: string[] = [];
    await Promise.all(
      Array.from({ length: AGENTS }, async () => {
        for (;;) {
          const next = await getNextStep(ctx, { planId });
          if (next.status !== "ready") return;
          await submitStepResult(ctx, {
            planId,
            stepId: next.step.stepId,
            result: { order: next.step.stepOrder },
            stepExecutionReport: report,
          });
          submitted.push(next.step.stepId);
        }
      }),
    );
    expect(new Set(submitted).size).toBe(steps);
    expect(submitted.length).toBe(steps);
    expect((await getPlanStatus(ctx, { planId })).status).toBe("completed");
    const kept = await readRows(
      handle.db,
      sql`select count(*) filter (where status = 'completed')::int as completed,
        count(*) filter (where result ->> 'order' = step_order::text)::int as results
      from plan_step where plan_id = ${planId}`,
    );
    expect(kept).toEqual([{ completed: steps, results: steps }]);
    await handle.close();
    handle = undefined;
  });

  it("with the stock setting: says what to set, turns prepared statements off, and keeps every acknowledged write", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const { run, db } = await runThroughBouncer(true, "Stock");
      expect(adviceIn(warn)).toBe(1);
      expect(run.errors).toEqual([]);
      expect(run.plans.length).toBe(AGENTS * PLANS_EACH);
      await expectEverythingKept(db, run, STEPS);
    } finally {
      warn.mockRestore();
      await handle?.close();
      handle = undefined;
    }
  });
});

describe("over /api/mcp, the production server behind PgBouncer in transaction mode", () => {
  for (const setting of ["off", "on"] as const) {
    it(`with CAIRN_PREPARED_STATEMENTS=${setting}: every agent's plans done, nothing lost, nothing handed out twice`, async () => {
      let bouncer: PgBouncer | undefined;
      const app = await startAppServer("postgres", {
        env: { CAIRN_PREPARED_STATEMENTS: setting },
        serveThrough: async (url) => {
          bouncer = await startPgBouncer({ serverUrl: url, poolMode: "transaction", poolSize: 3 });
          return bouncer.url;
        },
      });
      const agents = await Promise.all(
        Array.from({ length: AGENTS }, () => connectAgent(app.mcpUrl, app.tenantA.key)),
      );
      const direct = await app.openDatabase();
      try {
        const run = await runPlans((index) => agents[index] as Agent, {
          agents: AGENTS,
          plansEach: PLANS_EACH,
          steps: STEPS,
        });
        expect(run.errors).toEqual([]);
        expect(run.plans.length).toBe(AGENTS * PLANS_EACH);
        await expectEverythingKept(direct.db, run, STEPS);
        // The stock setting behind the pooler: the server said what to set when it opened.
        expect(app.serverOutput().includes("Set CAIRN_PREPARED_STATEMENTS=off")).toBe(
          setting === "on",
        );
        // Behind the pooler the server hears no notification of the credential
        // tables, so it remembers no key: revoked, the key is refused at once.
        await direct.db
          .update(apiKeys)
          .set({ revokedAt: new Date() })
          .where(eq(apiKeys.id, app.tenantA.apiKeyId));
        await expect((agents[0] as Agent).call("list_active_plans", {})).rejects.toThrow(
          /401|Unauthorized/,
        );
      } finally {
        await Promise.all(agents.map((agent) => agent.close()));
        await direct.close();
        await app.stop();
        await bouncer?.stop();
      }
    }, 240_000);
  }
});

/** How many times Cairn logged what to set behind a transaction pooler. */
const adviceIn = (warn: MockInstance<typeof console.warn>) =>
  warn.mock.calls.filter(([line]) => String(line).includes("Set CAIRN_PREPARED_STATEMENTS=off"))
    .length;

describe("transaction control on PostgreSQL", () => {
  let handle: DatabaseHandle;

  beforeAll(async () => {
    // One connection, so a statement prepared once is the one the next call finds gone.
    handle = await openDatabase({
      kind: "postgres",
      url: await createPostgresDatabase(),
      maxConnections: 1,
    });
    await handle.migrate();
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("fails a transaction whose commit PostgreSQL answered with ROLLBACK, and keeps nothing of it", async () => {
    const name = "Rolled back";
    const attempt = handle.db.transaction(async (tx) => {
      await tx.insert(tenants).values({ name });
      // A failed statement whose error the body swallows aborts the
      // transaction: PostgreSQL answers the commit with ROLLBACK, no error.
      await tx.execute(sql`select 1 / 0`).catch(() => {});
    });
    await expect(attempt).rejects.toMatchObject({ code: "COMMIT_NOT_CARRIED_OUT" });
    await expect(attempt.catch((error) => isDatabaseUnavailable(error))).resolves.toBe(true);
    expect(await handle.db.select().from(tenants).where(eq(tenants.name, name))).toEqual([]);
  });

  it("fails a transaction at once when its connection closes under it, and serves the next call", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const admin = postgres(testPostgresUrl(), { max: 1, onnotice: () => {} });
    try {
      const name = "Cut off";
      // What the statement sent after the close came to: its answer, or its error.
      let settle: (outcome: unknown) => void = () => {};
      const afterClose = new Promise((resolve) => {
        settle = resolve;
      });
      const attempt = handle.db.transaction(async (tx) => {
        await tx.insert(tenants).values({ name });
        const [backend] = await readRows<{ pid: number }>(tx, sql`select pg_backend_pid() as pid`);
        await admin`select pg_terminate_backend(${backend?.pid ?? 0})`;
        // The connection is closed by now: postgres.js's own transactions
        // write this statement to no socket (an uncaught TypeError) and
        // never answer it.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await tx
          .select({ id: tenants.id })
          .from(tenants)
          .then(settle, (error: unknown) => {
            settle(error);
            throw error;
          });
      });
      await expect(attempt).rejects.toSatisfy(isDatabaseUnavailable);
      expect(isDatabaseUnavailable(await afterClose)).toBe(true);
      expect(await handle.db.select().from(tenants).where(eq(tenants.name, name))).toEqual([]);
    } finally {
      await admin.end();
      warn.mockRestore();
    }
  });

  it("turns prepared statements off at the first one the server lost, saying what to set", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const byName = (name: string) =>
        handle.db.select({ id: tenants.id }).from(tenants).where(eq(tenants.name, name));
      expect(await byName("Nobody")).toEqual([]);
      // What a transaction pooler does between two statements of a connection.
      await handle.db.execute(sql`deallocate all`);
      const lost = handle.db.transaction(async (tx) => {
        await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.name, "Nobody"));
      });
      await expect(lost).rejects.toSatisfy(isDatabaseUnavailable);
      expect(adviceIn(warn)).toBe(1);
      await handle.db.transaction(async (tx) => {
        await tx.insert(tenants).values({ name: "After" });
      });
      expect(await byName("After")).toHaveLength(1);
      const prepared = await readRows<{ statement: string }>(
        handle.db,
        sql`select statement from pg_prepared_statements`,
      );
      expect(prepared).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });
});

describe("CAIRN_PREPARED_STATEMENTS=off on PostgreSQL", () => {
  it("leaves no statement prepared on the server, the loop's fixed ones included", async () => {
    const handle = await openDatabase({
      kind: "postgres",
      url: await createPostgresDatabase(),
      // One connection: the check below sees what the calls left on it.
      maxConnections: 1,
      preparedStatements: false,
    });
    try {
      await handle.migrate();
      const agent = inProcessAgent(await tenantContext(handle.db, "Plain"));
      const { planId } = await agent.ok("create_research_plan", {
        name: "Plain",
        researchQuestion: "q",
        steps: planSteps("search", "analyze"),
      });
      for (;;) {
        const next = await agent.ok("get_next_step", { planId });
        if (next.status === "plan_complete") break;
        if (!next.step) throw new Error(next.status);
        await agent.submit(planId, next.step.stepId);
      }
      const prepared = await readRows<{ statement: string }>(
        handle.db,
        sql`select statement from pg_prepared_statements`,
      );
      expect(prepared).toEqual([]);
    } finally {
      await handle.close();
    }
  });
});
