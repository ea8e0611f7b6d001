/**
 * Section 3, Cairn's core in process: the agents call the service functions
 * directly (no HTTP), each agent with its own connection, as the floor's
 * clients and pg-boss's workers have.
 */
import type { Sql } from "postgres";
import { openDatabase } from "@/lib/db/client";
import { createPlan } from "@/lib/services/plans/create-plan";
import { getNextStep } from "@/lib/services/plans/get-next-step";
import { submitStepResult } from "@/lib/services/plans/submit-step-result";
import type { ServiceContext } from "@/lib/services/shared/context";
import { type CairnCalls, type LoopRun, runOwnPlans, runSharedPlan } from "./support/agents";
import { type HostShare, startHostClock } from "./support/host";
import type { BenchTenant } from "./support/tenant";
import { type Verification, verifyRun } from "./support/verify";

/**
 * Where a measured run's time went, per step (a get_next_step that handed out
 * a step plus its submit): statements PostgreSQL ran, its planning and
 * execution time (pg_stat_statements, planning tracked), and this process's
 * CPU (the agents, drizzle, postgres.js and zod).
 */
export type CoreProfile = {
  statementsPerStep: number;
  planMsPerStep: number;
  execMsPerStep: number;
  /** Planning time per statement call: near zero once plans are reused. */
  planMsPerStatement: number;
  nodeCpuMsPerStep: number;
  /**
   * The statements that took the most PostgreSQL time, per statement: how many
   * calls per step, and planning and execution per call. Named by the
   * statement's own name where it has one (the loop's fixed statements carry it
   * as a leading comment, lib/db/statement.ts).
   */
  statements: StatementProfile[];
};

export type StatementProfile = {
  label: string;
  callsPerStep: number;
  planMsPerCall: number;
  execMsPerCall: number;
};

export type CoreRun = Omit<LoopRun, "planIds"> & {
  kind: "own" | "shared";
  verification: Verification;
  profile: CoreProfile;
  /** The host's steal over the timed run (bench/support/host.ts). */
  host?: HostShare;
};

type StatementRow = { id: string; query: string; calls: number; planMs: number; execMs: number };

/** This database's statements in pg_stat_statements, by query id. */
async function statementRows(sql: Sql): Promise<Map<string, StatementRow>> {
  const rows = await sql<StatementRow[]>`
    select queryid::text as id, query, calls::float8 as calls,
      total_plan_time::float8 as "planMs", total_exec_time::float8 as "execMs"
    from pg_stat_statements
    where dbid = (select oid from pg_database where datname = current_database())`;
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * How many statements this database has run (pg_stat_statements), leaving
 * out the reads of that view (this one's and the profile's) and the
 * tool-call log's batch writes (lib/services/shared/tool-call-log.ts): one
 * for each 200 ms with calls in it, off the answers' path, so their number per
 * call grows as calls slow down.
 */
export async function statementsRun(sql: Sql): Promise<number> {
  await sql`create extension if not exists pg_stat_statements`;
  const [row] = await sql<{ n: number }[]>`
    select coalesce(sum(calls), 0)::float8 as n from pg_stat_statements
    where dbid = (select oid from pg_database where datname = current_database())
      and query not like '%pg_stat_statements%'
      and query not like '/* write tool-call log rows */%'`;
  return row?.n ?? 0;
}

/** A statement's name: the leading comment of the loop's fixed statements, else its first words. */
function statementLabel(query: string): string {
  const named = /^\/\* (.+?) \*\//.exec(query);
  if (named?.[1]) return named[1];
  const words = query.replace(/\s+/g, " ").trim();
  return words.length > 60 ? `${words.slice(0, 57)}...` : words;
}

const TOP_STATEMENTS = 6;

type StatementDelta = { label: string; calls: number; planMs: number; execMs: number };

/** What each statement ran between two reads, leaving out the profile's own reads. */
function statementDeltas(
  before: Map<string, StatementRow>,
  after: Map<string, StatementRow>,
): StatementDelta[] {
  return (
    [...after.values()]
      .map((row) => {
        const was = before.get(row.id);
        return {
          label: statementLabel(row.query),
          calls: row.calls - (was?.calls ?? 0),
          planMs: row.planMs - (was?.planMs ?? 0),
          execMs: row.execMs - (was?.execMs ?? 0),
        };
      })
      // The profile's own reads of pg_stat_statements are no loop's.
      .filter((d) => d.calls > 0 && !d.label.includes("pg_stat_statements"))
  );
}

const round4 = (value: number) => Math.round(value * 10_000) / 10_000;

function topStatements(deltas: StatementDelta[], steps: number): StatementProfile[] {
  return [...deltas]
    .sort((a, b) => b.planMs + b.execMs - (a.planMs + a.execMs))
    .slice(0, TOP_STATEMENTS)
    .map((d) => ({
      label: d.label,
      callsPerStep: per(d.calls, steps),
      planMsPerCall: round4(d.planMs / d.calls),
      execMsPerCall: round4(d.execMs / d.calls),
    }));
}

const per = (value: number, steps: number) =>
  steps === 0 ? 0 : Math.round((value / steps) * 1000) / 1000;

export const OWN_PLAN_STEPS = 10;
export const SHARED_PLAN_STEPS = 200;

/**
 * The loop's calls in process, as the tenant's API key, on a pool of
 * `connections`, by default the server's own (`openDatabase`'s), which is
 * what the agents of one Cairn instance share over MCP.
 */
export async function openCoreCalls(
  url: string,
  tenant: BenchTenant,
  connections?: number,
): Promise<{ calls: CairnCalls; close(): Promise<void> }> {
  const handle = await openDatabase({ kind: "postgres", url, maxConnections: connections });
  const ctx: ServiceContext = {
    db: handle.db,
    tenantId: tenant.tenantId,
    actor: { type: "api_key", id: tenant.apiKeyId, label: "benchmark agent" },
    stallThresholdSeconds: 1800,
  };
  return {
    calls: {
      createPlan: (input) => createPlan(ctx, input),
      getNextStep: (planId) => getNextStep(ctx, { planId }),
      submitStepResult: (input) => submitStepResult(ctx, input),
    },
    close: () => handle.close(),
  };
}

export type CoreRunKind = { agents: number; kind: CoreRun["kind"] };

export async function runCore(
  url: string,
  tenant: BenchTenant,
  { agents, kind }: CoreRunKind,
  verifySql: Sql,
  durationMs: number,
): Promise<CoreRun> {
  // The server's pool, not one connection an agent: at 32 agents 32
  // committers queue on the WAL's write lock and the loop runs about a
  // quarter slower (docs/performance.md, "Each at its own pool").
  const { calls, close } = await openCoreCalls(url, tenant);
  try {
    const team = Array.from({ length: agents }, () => calls);
    // A short unmeasured pass first, so JIT, the connection pool and the
    // prepared statements are warm.
    await runOwnPlans(team, OWN_PLAN_STEPS, 500);
    await verifySql`create extension if not exists pg_stat_statements`;
    const rowsBefore = await statementRows(verifySql);
    const cpuBefore = process.cpuUsage();
    const hostClock = startHostClock();
    const run =
      kind === "own"
        ? await runOwnPlans(team, OWN_PLAN_STEPS, durationMs)
        : await runSharedPlan(team, SHARED_PLAN_STEPS, durationMs);
    const host = hostClock();
    const cpu = process.cpuUsage(cpuBefore);
    const deltas = statementDeltas(rowsBefore, await statementRows(verifySql));
    const sum = (field: "calls" | "planMs" | "execMs") =>
      deltas.reduce((total, d) => total + d[field], 0);
    const statements = sum("calls");
    const profile: CoreProfile = {
      statementsPerStep: per(statements, run.steps),
      planMsPerStep: per(sum("planMs"), run.steps),
      execMsPerStep: per(sum("execMs"), run.steps),
      planMsPerStatement: statements === 0 ? 0 : round4(sum("planMs") / statements),
      nodeCpuMsPerStep: per((cpu.user + cpu.system) / 1000, run.steps),
      statements: topStatements(deltas, run.steps),
    };
    const { planIds: _, ...figures } = run;
    const verification = await verifyRun(verifySql, run);
    return { kind, ...figures, profile, verification, host };
  } finally {
    await close();
  }
}
