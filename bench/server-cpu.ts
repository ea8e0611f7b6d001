/**
 * The MCP door's cost as the server's own CPU: the user + system time of the
 * production server's process tree (bench/support/next-server.ts) across a fixed
 * number of calls from one client, for `ping`, `get_plan_status` and the loop,
 * beside the same loop's CPU in process (this process calling the service
 * functions). Throughput on two shared cores mixes in the clients' own CPU;
 * this figure does not. PostgreSQL's CPU is in neither.
 */
import { OWN_PLAN_STEPS } from "./core";
import { type CairnCalls, runOwnPlanCalls } from "./support/agents";
import { type HostShare, startHostClock } from "./support/host";
import { percentile, round, sleep } from "./support/stats";
import { planInput } from "./support/workload";

/** CPU ms per call: the median over the repetitions, and each repetition's figure. */
export type CpuPerCall = { msPerCall: number; runs: number[] };

export type ServerCpu = {
  /** Calls per repetition (the loop finishes the plan it is in, so a few more). */
  callsPerRun: number;
  ping: CpuPerCall;
  getPlanStatus: CpuPerCall;
  loop: CpuPerCall;
  inProcessLoop: CpuPerCall;
  /**
   * The server's CPU per second with no call in flight (its timers: review
   * deadlines, the notifier, the statement sweep), which every figure above includes.
   */
  idleMsPerSecond: number;
  /**
   * MCP loop ÷ in-process loop, the median of the repetitions' ratios: each
   * repetition takes the two back to back, so a drift of the host's speed
   * cancels out of its ratio.
   */
  loopRatio: number;
  /**
   * Statements PostgreSQL ran per loop call (pg_stat_statements, the
   * tool-call log's batches left out: `statementsRun`), the median of the
   * repetitions: the work a call asks of the database, which the host's load
   * barely moves, so a statement added to the loop's path shows here however
   * noisy the times are (the regression gate holds them).
   */
  statementsPerLoopCall: { mcp: number; inProcess: number };
  /** The host's steal over the measured passes (bench/support/host.ts). */
  host?: HostShare;
};

/** One MCP client's calls. */
export type McpCpuClient = {
  calls: CairnCalls;
  ping(): Promise<void>;
  getPlanStatus(planId: string): Promise<void>;
  close(): Promise<void>;
};

/** New MCP clients, the server's CPU clock, and the database's statement count. */
export type McpCpuProbe = {
  connect(): Promise<McpCpuClient>;
  serverCpuMs(): number;
  /** Statements the database has run so far (`statementsRun` in bench/core.ts says which). */
  statementsRun(): Promise<number>;
};

/** Long enough for several ticks of /proc's 10 ms clock if the timers cost anything. */
const IDLE_MS = 3_000;

const processCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** What a measured run made: its calls, and the statements per call when counted. */
type Run = { calls: number; statementsPerCall: number };

/**
 * CPU ms per call of `work`, which answers how many calls it made. With
 * `counts`, also the statements the database ran per call (in `run`), counted
 * around `work` alone.
 */
async function perCall(
  cpuMs: () => number,
  work: () => Promise<number>,
  run: Run,
  counts?: McpCpuProbe,
): Promise<number> {
  const statementsBefore = counts ? await settledStatements(counts) : 0;
  const before = cpuMs();
  run.calls = await work();
  const ms = (cpuMs() - before) / run.calls;
  if (counts) {
    run.statementsPerCall = ((await settledStatements(counts)) - statementsBefore) / run.calls;
  }
  return ms;
}

const summary = (runs: number[]): CpuPerCall => ({
  msPerCall: round(percentile(runs, 50)),
  runs: runs.map((run) => round(run)),
});

/**
 * One unmeasured pass of everything (the route's modules, JIT, the connection
 * pools), then `repetitions` rounds of `calls` calls of each kind, one client
 * at a time, so no call waits on another's CPU.
 */
export async function measureServerCpu(
  mcp: McpCpuProbe,
  inProcess: CairnCalls,
  calls: number,
  repetitions: number,
): Promise<ServerCpu> {
  // A fresh client for each run, connected and closed outside the measured
  // window: fetch keeps an abort listener per request on a client's signal
  // until garbage collection, and warns on every request past 1,500.
  const overMcp =
    (work: (client: McpCpuClient) => Promise<number>, counted = false) =>
    async (run: Run) => {
      const client = await mcp.connect();
      try {
        return await perCall(mcp.serverCpuMs, () => work(client), run, counted ? mcp : undefined);
      } finally {
        await client.close();
      }
    };
  const planner = await mcp.connect();
  const { planId } = await planner.calls
    .createPlan(planInput("Bench status plan", OWN_PLAN_STEPS))
    .finally(() => planner.close());
  const kinds = {
    ping: overMcp((client) => repeat(calls, client.ping)),
    getPlanStatus: overMcp((client) => repeat(calls, () => client.getPlanStatus(planId))),
    loop: overMcp((client) => runOwnPlanCalls(client.calls, OWN_PLAN_STEPS, calls), true),
    inProcessLoop: (run: Run) =>
      perCall(processCpuMs, () => runOwnPlanCalls(inProcess, OWN_PLAN_STEPS, calls), run, mcp),
  };
  const runs: Record<keyof typeof kinds, number[]> = {
    ping: [],
    getPlanStatus: [],
    loop: [],
    inProcessLoop: [],
  };
  const statements: Record<"loop" | "inProcessLoop", number[]> = { loop: [], inProcessLoop: [] };
  // Started once the warm-up is done.
  let hostClock: (() => HostShare | undefined) | undefined;
  // Pass 0 is the warm-up.
  for (let pass = 0; pass <= repetitions; pass += 1) {
    if (pass === 1) hostClock = startHostClock();
    for (const kind of Object.keys(kinds) as (keyof typeof kinds)[]) {
      const run = { calls: 0, statementsPerCall: 0 };
      const value = await kinds[kind](run);
      if (pass === 0) continue;
      runs[kind].push(value);
      if (kind === "loop" || kind === "inProcessLoop") statements[kind].push(run.statementsPerCall);
    }
  }
  const host = hostClock?.();
  const ratios = runs.loop.map((loop, i) => loop / (runs.inProcessLoop[i] as number));
  const idleBefore = mcp.serverCpuMs();
  await sleep(IDLE_MS);
  const idleMsPerSecond = round(((mcp.serverCpuMs() - idleBefore) * 1000) / IDLE_MS, 1);
  return {
    callsPerRun: calls,
    ping: summary(runs.ping),
    getPlanStatus: summary(runs.getPlanStatus),
    loop: summary(runs.loop),
    inProcessLoop: summary(runs.inProcessLoop),
    idleMsPerSecond,
    loopRatio: round(percentile(ratios, 50), 2),
    statementsPerLoopCall: {
      mcp: round(percentile(statements.loop, 50), 2),
      inProcess: round(percentile(statements.inProcessLoop, 50), 2),
    },
    host,
  };
}

/**
 * The statement count once the server's writes after its answers have landed
 * (the notification dispatcher's, kicked by a plan's end).
 */
async function settledStatements(mcp: McpCpuProbe): Promise<number> {
  await sleep(SETTLE_MS);
  return mcp.statementsRun();
}

/** Longer than the server takes to write after its last answer (its batches wait 200 ms). */
const SETTLE_MS = 500;

async function repeat(calls: number, call: () => Promise<void>): Promise<number> {
  for (let i = 0; i < calls; i += 1) await call();
  return calls;
}
