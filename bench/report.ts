/**
 * Turns one run's figures into the ratios and verdicts of the benchmark issue,
 * and writes them as JSON and as a Markdown summary. Every ratio comes from
 * figures of this one run; a missed target is printed as MISS, never tuned away.
 */
import type { CoreRun } from "./core";
import type { FloorRun } from "./floor";
import type { McpSection } from "./mcp";
import type { PeerRun } from "./peer";
import type { ScalePoint } from "./scale";
import type { SearchPoint } from "./search";
import type { ServerStepsRun } from "./server-steps";
import type { HostShare } from "./support/host";
import type { LatencySummary } from "./support/stats";
import { percentile, round } from "./support/stats";

/** A figure that could not be taken in this build, and why. */
export type NotMeasured = { measured: false; reason: string };

export type Results = {
  date: string;
  startedAt: string;
  durationSeconds: number;
  machine: { cpus: number; cpuModel: string; memoryGb: number; node: string; postgres: string };
  floor: FloorRun[];
  peer: PeerRun[];
  core: CoreRun[];
  /**
   * pg-boss and then the core loop run again in a row at a level, after the
   * pair whose figures are `peer` and `core` (bench/run.ts, PAIRS).
   */
  pairs: PeerCorePair[];
  mcp: McpSection;
  scale: {
    points: ScalePoint[];
    searchSources: NotMeasured | { measured: true; points: SearchPoint[] };
    planPageRender: NotMeasured | { measured: true; latency: LatencySummary };
  };
  serverSteps: NotMeasured | ({ measured: true } & ServerStepsRun);
};

export type PeerCorePair = { agents: number; peer: PeerRun; core: CoreRun };

export type Verdict = {
  figure: string;
  value: number | null;
  target: string;
  /** null: not measured in this build. */
  pass: boolean | null;
  note?: string;
};

/** Which way a ratio improves: the regression gate (bench/gate.ts) reads it. */
export type Better = "higher" | "lower";

export type Ratio = { name: string; value: number; detail: string; better: Better };

/**
 * The server's CPU per MCP loop call on the code of the 2026-11-28 run, in ms:
 * the run on the least loaded machine, since the figure grows with the host's
 * load (docs/performance.md has every run); issue 41 asks for half.
 */
export const SERVER_CPU_LOOP_BASELINE_MS = 4.04;

function byLevel<T>(rows: readonly T[], key: (row: T) => number, level: number): T {
  const row = rows.find((r) => key(r) === level);
  if (!row) throw new Error(`No figures at ${level}.`);
  return row;
}

/** A level's pairs of pg-boss and the core loop, the tables' first; a figure of several is their median. */
function pairsOf(results: Results, agents: number): PeerCorePair[] {
  const own = results.core.filter((run) => run.kind === "own");
  return [
    {
      agents,
      peer: byLevel(results.peer, (r) => r.workers, agents),
      core: byLevel(own, (r) => r.agents, agents),
    },
    ...results.pairs.filter((pair) => pair.agents === agents),
  ];
}

const checks = (run: { verification: { violations: string[] } }) =>
  run.verification.violations.length === 0
    ? "pass"
    : `FAIL: ${run.verification.violations.join("; ")}`;

type Rate = { stepsPerSecond: number };

/** A run's host steal in percent for a table's cell; "—" where it was not read. */
const stealCell = (run: { host?: HostShare }) => (run.host ? `${run.host.stealPercent}` : "—");

/** A run's disks' mean ms per write and per flush for a table's cell; "—" for what was not read. */
const diskCell = (run: { host?: HostShare }) =>
  `${run.host?.diskWriteMs ?? "—"} / ${run.host?.diskFlushMs ?? "—"}`;

/**
 * Every timed run's host steal, labelled, in the order the run took them: how
 * quiet the machine was (bench/support/host.ts).
 */
export function hostSteal(results: Results): ({ label: string } & HostShare)[] {
  const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
  // A level's later pairs, numbered as the pairs table numbers them (the first is the tables').
  const laterPairs = [...new Set(results.pairs.map((pair) => pair.agents))].flatMap((agents) =>
    pairsOf(results, agents)
      .slice(1)
      .map((pair, index) => ({ ...pair, number: index + 2 })),
  );
  const labelled: [string, { host?: HostShare }][] = [
    ...results.peer.map((r): [string, PeerRun] => [`pg-boss, ${count(r.workers, "worker")}`, r]),
    ...laterPairs.map(({ agents, peer, number }): [string, PeerRun] => [
      `pg-boss, ${count(agents, "worker")}, pair ${number}`,
      peer,
    ]),
    ...results.core.map((r): [string, CoreRun] => [
      `core, ${r.kind} plans, ${count(r.agents, "agent")}`,
      r,
    ]),
    ...laterPairs.map(({ agents, core, number }): [string, CoreRun] => [
      `core, own plans, ${count(agents, "agent")}, pair ${number}`,
      core,
    ]),
    ...results.mcp.loops.map((r): [string, { host?: HostShare }] => [
      `MCP 2025-11-25, ${count(r.agents, "agent")}`,
      r,
    ]),
    ...(results.mcp.modern?.loops ?? []).map((r): [string, { host?: HostShare }] => [
      `MCP 2026-07-28, ${count(r.agents, "agent")}`,
      r,
    ]),
    [`MCP ping 2025-11-25, ${count(results.mcp.ping.agents, "agent")}`, results.mcp.ping],
    ...(results.mcp.modern
      ? [
          [
            `MCP ping 2026-07-28, ${count(results.mcp.modern.ping.agents, "agent")}`,
            results.mcp.modern.ping,
          ] as [string, { host?: HostShare }],
        ]
      : []),
    ["server CPU per MCP call", results.mcp.serverCpu],
  ];
  return labelled.flatMap(([label, run]) => (run.host ? [{ label, ...run.host }] : []));
}

/** The host's steal over a run's timed runs, as Markdown (none where it was not read). */
export function quietLines(runs: readonly ({ label: string } & HostShare)[]): string[] {
  if (runs.length === 0) return [];
  const highest = runs.reduce((top, run) => (run.stealPercent > top.stealPercent ? run : top));
  const median = round(
    percentile(
      runs.map((run) => run.stealPercent),
      50,
    ),
    1,
  );
  const over = runs.filter((run) => run.stealPercent >= NOISY_STEAL_PERCENT);
  return [
    "## How quiet the machine was",
    "",
    "The host's steal (CPU time the hypervisor gave other guests, as a share of all the machine's CPU time) over each timed run: " +
      `median ${median}%, highest ${highest.stealPercent}% (${highest.label}). ` +
      (over.length === 0
        ? `No run had ${NOISY_STEAL_PERCENT}% or more.`
        : `Runs with ${NOISY_STEAL_PERCENT}% or more, whose rates the host moved: ${over.map((run) => `${run.label} ${run.stealPercent}%`).join("; ")}.`) +
      ` ${diskLine(runs)}` +
      " Each table below gives its runs' steal and disk times.",
    "",
  ];
}

/** The range of the disks' mean write and flush times over the runs, as a sentence. */
function diskLine(runs: readonly HostShare[]): string {
  const range = (values: (number | undefined)[]) => {
    const read = values.filter((value): value is number => value !== undefined);
    if (read.length === 0) return undefined;
    const [low, high] = [Math.min(...read), Math.max(...read)];
    return low === high ? `${low} ms` : `${low}-${high} ms`;
  };
  const write = range(runs.map((run) => run.diskWriteMs));
  const flush = range(runs.map((run) => run.diskFlushMs));
  if (!write && !flush) return "The disks' times were not read.";
  return `The disks' mean time per write completed in a run was ${write ?? "not read"}, per flush ${flush ?? "not read"} (a slower disk lengthens every commit's wait without taking CPU).`;
}

/**
 * Steal from this share up marks a run the host moved: a core's twentieth,
 * beyond the 0.2-1% a quiet hour of this machine shows.
 */
const NOISY_STEAL_PERCENT = 5;

/**
 * Core ÷ pg-boss over a level's pairs: the median of each pair's own ratio
 * (two runs a minute apart share the host's moment; the median of all cores
 * over the median of all pg-boss runs would not), and the figures it came from.
 */
export function coreOverPeer(pairs: readonly { peer: Rate; core: Rate }[]): {
  value: number;
  detail: string;
} {
  const each = pairs.map(({ core, peer }) => `${core.stepsPerSecond} ÷ ${peer.stepsPerSecond}`);
  const value = round(
    percentile(
      pairs.map(({ core, peer }) => core.stepsPerSecond / peer.stepsPerSecond),
      50,
    ),
    2,
  );
  return {
    value,
    detail:
      pairs.length === 1
        ? each.join("")
        : `median of ${pairs.length} pairs in a row: ${each.join(", ")}`,
  };
}

/** The pairs of every level that ran more than one, as Markdown. */
function pairLines(results: Results): string[] {
  const levels = [...new Set(results.pairs.map((pair) => pair.agents))];
  if (levels.length === 0) return [];
  return [
    "pg-boss and then Cairn's core loop (section 3) ran again, in a row, at these levels; core ÷ pg-boss is the median of a level's pairs, the first pair's figures being the tables':",
    "",
    "| agents | pair | pg-boss steps/s | core steps/s | core ÷ pg-boss | host steal % (pg-boss, core) | disk ms per write / flush (pg-boss, core) | checks |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...levels.flatMap((agents) =>
      pairsOf(results, agents).map(
        ({ peer, core }, index) =>
          `| ${agents} | ${index + 1} | ${peer.stepsPerSecond} | ${core.stepsPerSecond} | ${round(core.stepsPerSecond / peer.stepsPerSecond, 2)} | ${stealCell(peer)}, ${stealCell(core)} | ${diskCell(peer)}, ${diskCell(core)} | ${checks(core)} |`,
      ),
    ),
    "",
  ];
}

/**
 * Every loop run's failed checks: the tables' runs, the later pairs' and the
 * MCP loops'. The verdict and the run's exit code (bench/run.ts) both read it.
 */
export function correctnessViolations(results: Results): string[] {
  return [
    ...results.core,
    ...results.pairs.map((pair) => pair.core),
    ...results.mcp.loops,
    ...(results.mcp.modern?.loops ?? []),
  ].flatMap((run) => run.verification.violations);
}

export function ratiosAndVerdicts(results: Results): { ratios: Ratio[]; verdicts: Verdict[] } {
  const ratios: Ratio[] = [];
  const verdicts: Verdict[] = [];
  const own = results.core.filter((run) => run.kind === "own");
  const floor = (clients: number) => byLevel(results.floor, (r) => r.clients, clients);
  const core = (agents: number) => byLevel(own, (r) => r.agents, agents);
  const mcp = (agents: number) => byLevel(results.mcp.loops, (r) => r.agents, agents);
  const atLeast = (value: number, min: number) => value >= min;
  const atMost = (value: number, max: number) => value <= max;
  // A level's core rate over its pairs, and how the detail column says it.
  const coreRate = (agents: number) =>
    percentile(
      pairsOf(results, agents).map((pair) => pair.core.stepsPerSecond),
      50,
    );
  const coreRateDetail = (agents: number) => {
    const runs = pairsOf(results, agents).length;
    return runs === 1 ? `${coreRate(agents)}` : `${coreRate(agents)} (median of ${runs} runs)`;
  };

  for (const run of own) {
    const vsPeer = coreOverPeer(pairsOf(results, run.agents));
    ratios.push({
      name: `core ÷ pg-boss steps/s, ${run.agents} agent(s)`,
      value: vsPeer.value,
      detail: vsPeer.detail,
      better: "higher",
    });
    // The first pair's core run, the one next to the floor's run in time.
    const vsFloor = round((2 * run.stepsPerSecond) / floor(run.agents).updatePerSecond, 2);
    ratios.push({
      name: `2 × core steps/s ÷ floor UPDATE tx/s, ${run.agents} client(s)`,
      value: vsFloor,
      detail: `2 × ${run.stepsPerSecond} ÷ ${floor(run.agents).updatePerSecond}`,
      better: "higher",
    });
    if (run.agents !== 1) {
      verdicts.push({
        figure: `Core, ${run.agents} agents: steps/s ÷ pg-boss`,
        value: vsPeer.value,
        target: "≥ 2",
        pass: atLeast(vsPeer.value, 2),
      });
    }
  }
  const oneStep = round(core(1).latency.step.p50 / floor(1).update.p50, 2);
  verdicts.push({
    figure: "Core, 1 agent: step p50 ÷ floor UPDATE p50",
    value: oneStep,
    target: "≤ 3",
    pass: atMost(oneStep, 3),
    note: `${core(1).latency.step.p50} ms ÷ ${floor(1).update.p50} ms`,
  });

  const mcp8 = mcp(8);
  const core8 = core(8);
  const mcpVsCore = round(mcp8.stepsPerSecond / coreRate(8), 2);
  ratios.push({
    name: "MCP ÷ core steps/s, 8 agents",
    value: mcpVsCore,
    detail: `${mcp8.stepsPerSecond} ÷ ${coreRateDetail(8)}`,
    better: "higher",
  });
  verdicts.push({
    figure: "MCP, 8 agents: steps/s ÷ core",
    value: mcpVsCore,
    target: "≥ 0.5",
    pass: atLeast(mcpVsCore, 0.5),
  });
  const mcpLatency = round(mcp8.latency.step.p50 / core8.latency.step.p50, 2);
  verdicts.push({
    figure: "MCP, 8 agents: step p50 ÷ core",
    value: mcpLatency,
    target: "≤ 4",
    pass: atMost(mcpLatency, 4),
    note: `${mcp8.latency.step.p50} ms ÷ ${core8.latency.step.p50} ms`,
  });
  const vsPing = round(mcp8.callsPerSecond / results.mcp.ping.callsPerSecond, 2);
  ratios.push({
    name: "MCP tool calls/s ÷ ping calls/s, 8 agents",
    value: vsPing,
    detail: `${mcp8.callsPerSecond} ÷ ${results.mcp.ping.callsPerSecond}`,
    better: "higher",
  });
  verdicts.push({
    figure: "MCP, 8 agents: tool calls/s ÷ ping calls/s",
    value: vsPing,
    target: "≥ 0.8",
    pass: atLeast(vsPing, 0.8),
  });

  const cpu = results.mcp.serverCpu;
  ratios.push({
    name: "server CPU per MCP loop call ÷ in-process CPU per loop call",
    value: cpu.loopRatio,
    detail: `median of ${cpu.loop.runs.length} paired runs; medians ${cpu.loop.msPerCall} ms ÷ ${cpu.inProcessLoop.msPerCall} ms`,
    better: "lower",
  });
  const statements = cpu.statementsPerLoopCall;
  ratios.push(
    {
      name: "statements per loop call, in process",
      value: statements.inProcess,
      detail: `pg_stat_statements, median of ${cpu.loop.runs.length} runs of ${cpu.callsPerRun} calls`,
      better: "lower",
    },
    {
      name: "statements per loop call, over MCP",
      value: statements.mcp,
      detail: `pg_stat_statements, median of ${cpu.loop.runs.length} runs of ${cpu.callsPerRun} calls, the server's writes after its answers included but the tool-call log's batches`,
      better: "lower",
    },
  );
  verdicts.push({
    figure: "Server CPU per MCP loop call (ms)",
    value: cpu.loop.msPerCall,
    target: `≤ ${round(SERVER_CPU_LOOP_BASELINE_MS / 2)} (half the 2026-11-28 baseline, ${SERVER_CPU_LOOP_BASELINE_MS} ms)`,
    pass: atMost(cpu.loop.msPerCall, SERVER_CPU_LOOP_BASELINE_MS / 2),
    note: `in process ${cpu.inProcessLoop.msPerCall} ms`,
  });

  const shared = results.core.find((run) => run.kind === "shared");
  if (shared) {
    const sharedRatio = round(shared.stepsPerSecond / coreRate(shared.agents), 2);
    ratios.push({
      name: `shared-plan ÷ own-plan steps/s, ${shared.agents} agents`,
      value: sharedRatio,
      detail: `${shared.stepsPerSecond} ÷ ${coreRateDetail(shared.agents)}`,
      better: "higher",
    });
    verdicts.push({
      figure: `Shared ${shared.stepsPerPlan}-step plan, ${shared.agents} agents: ÷ own plans`,
      value: sharedRatio,
      target: "≥ 0.55",
      pass: atLeast(sharedRatio, 0.55),
    });
    verdicts.push({
      figure: "Shared plan: duplicate hand-outs",
      value: shared.duplicateHandOuts,
      target: "0",
      pass: shared.duplicateHandOuts === 0,
    });
  }

  const [small, large] = [results.scale.points[0], results.scale.points.at(-1)];
  if (small && large && small !== large) {
    for (const call of ["getNextStep", "getPlanStatus"] as const) {
      const ratio = round(large[call].p50 / small[call].p50, 2);
      const tool = call === "getNextStep" ? "get_next_step" : "get_plan_status";
      ratios.push({
        name: `${tool} p50 at ${large.plans} ÷ at ${small.plans} plans`,
        value: ratio,
        detail: `${large[call].p50} ms ÷ ${small[call].p50} ms`,
        better: "lower",
      });
      verdicts.push({
        figure: `Scale: ${tool} p50 at ${large.plans.toLocaleString("en")} ÷ ${small.plans} plans`,
        value: ratio,
        target: "≤ 1.5",
        pass: atMost(ratio, 1.5),
      });
    }
  }
  const search = results.scale.searchSources;
  const largest = search.measured ? search.points.at(-1) : undefined;
  verdicts.push({
    figure: `search_sources p50 at ${(largest?.artifacts ?? 100_000).toLocaleString("en")} artifacts (ms)`,
    value: largest ? largest.latency.p50 : null,
    target: "< 50",
    pass: largest ? largest.latency.p50 < 50 : null,
    note: search.measured ? `p99 ${largest?.latency.p99} ms` : search.reason,
  });
  const page = results.scale.planPageRender;
  verdicts.push({
    figure: "Plan page (200 steps, 10,000 audit rows) server render (ms)",
    value: page.measured ? page.latency.p50 : null,
    target: "< 300",
    pass: page.measured ? page.latency.p50 < 300 : null,
    note: page.measured
      ? `p50; p99 ${page.latency.p99} ms, whole response on loopback`
      : page.reason,
  });
  const server = results.serverSteps;
  verdicts.push({
    figure: "Server-run steps: round trips of the get_next_step that runs 5",
    value: server.measured ? server.roundTrips : null,
    target: server.measured ? `≤ ${server.toolReads + 1} (tool reads + 1 write)` : "tool reads + 1",
    pass: server.measured ? server.roundTrips <= server.toolReads + 1 : null,
    note: server.measured
      ? `p50 ${server.latency.p50} ms for the call that runs 5 search_sources steps`
      : server.reason,
  });
  const peak = mcp(32).peakServerRssMb;
  verdicts.push({
    figure: "Peak server memory, 32 MCP agents (MB)",
    value: peak,
    target: "< 350",
    pass: peak < 350,
  });

  const violations = correctnessViolations(results);
  verdicts.push({
    figure: "Correctness checks (steps once, plans completed, audit = transitions)",
    value: violations.length,
    target: "0 violations",
    pass: violations.length === 0,
    note: violations.join("; ") || undefined,
  });
  return { ratios, verdicts };
}

const cell = (value: number | null) => (value === null ? "–" : String(value));

/** A figure not measured has its reason as the note, which then says it all. */
function verdictCell(v: Verdict): string {
  if (v.pass === null) return v.note ?? "not measured";
  const word = v.pass ? "PASS" : "**MISS**";
  return v.note ? `${word} (${v.note})` : word;
}

/** The targets table: printed at the end of a run and copied into docs/performance.md. */
export function summaryTable(verdicts: readonly Verdict[]): string {
  const rows = verdicts.map(
    (v) => `| ${v.figure} | ${cell(v.value)} | ${v.target} | ${verdictCell(v)} |`,
  );
  return ["| figure | measured | target | verdict |", "| --- | --- | --- | --- |", ...rows].join(
    "\n",
  );
}

export function markdown(results: Results, ratios: readonly Ratio[], verdicts: readonly Verdict[]) {
  const m = results.machine;
  const search = results.scale.searchSources;
  const page = results.scale.planPageRender;
  const lines = [
    `# Cairn benchmark, ${results.date}`,
    "",
    `${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, Node ${m.node}, ${m.postgres} (fsync on); ` +
      `the whole run took ${results.durationSeconds} s. Produced by \`npm run bench\`; ` +
      "the figures are in the JSON file of the same date.",
    "",
    "## Targets",
    "",
    summaryTable(verdicts),
    "",
    "## Ratios (all from this run)",
    "",
    "| ratio | value | from |",
    "| --- | --- | --- |",
    ...ratios.map((r) => `| ${r.name} | ${r.value} | ${r.detail} |`),
    "",
    ...quietLines(hostSteal(results)),
    "## 1. Floor: postgres.js, one connection per client",
    "",
    "| clients | SELECT 1/s | p50 ms | p99 ms | one-row UPDATE tx/s | p50 ms | p99 ms |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...results.floor.map(
      (r) =>
        `| ${r.clients} | ${r.selectPerSecond} | ${r.select.p50} | ${r.select.p99} | ${r.updatePerSecond} | ${r.update.p50} | ${r.update.p99} |`,
    ),
    "",
    "## 2. Peer: pg-boss send, then fetch + complete",
    "",
    "| workers | jobs | steps/s (send+fetch+complete) | fetch+complete/s | send p50 | fetch p50 | complete p50 | complete p99 | host steal % | disk ms per write / flush |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...results.peer.map(
      (r) =>
        `| ${r.workers} | ${r.jobs} | ${r.stepsPerSecond} | ${r.fetchCompletePerSecond} | ${r.send.p50} | ${r.fetch.p50} | ${r.complete.p50} | ${r.complete.p99} | ${stealCell(r)} | ${diskCell(r)} |`,
    ),
    "",
    ...pairLines(results),
    "## 3. Cairn's core in process, and 4. over MCP",
    "",
    "Latencies in ms. A step is get_next_step that hands out a step plus its submit_step_result.",
    "",
    "| run | agents | plans | steps | steps/s | calls/s | step p50 | step p99 | next p50 | next p99 | submit p50 | submit p99 | create p50 | host steal % | disk ms per write / flush | checks |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...[
      ...results.core.map((r) => ({ ...r, label: `core, ${r.kind} plans` })),
      ...results.mcp.loops.map((r) => ({ ...r, label: "MCP 2025-11-25, own plans" })),
      ...(results.mcp.modern?.loops ?? []).map((r) => ({
        ...r,
        label: "MCP 2026-07-28, own plans",
      })),
    ].map(
      (r) =>
        `| ${r.label} (${r.stepsPerPlan} steps) | ${r.agents} | ${r.plans} | ${r.steps} | ${r.stepsPerSecond} | ${r.callsPerSecond} | ${r.latency.step.p50} | ${r.latency.step.p99} | ${r.latency.getNextStep.p50} | ${r.latency.getNextStep.p99} | ${r.latency.submitStepResult.p50} | ${r.latency.submitStepResult.p99} | ${r.latency.createPlan.p50} | ${stealCell(r)} | ${diskCell(r)} | ${checks(r)} |`,
    ),
    "",
    "Where a core step's time went (pg_stat_statements with planning tracked, and this process's CPU), per step:",
    "",
    "| run | agents | statements | PostgreSQL planning ms | PostgreSQL execution ms | planning ms per statement | Node CPU ms |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...results.core.map(
      (r) =>
        `| core, ${r.kind} plans | ${r.agents} | ${r.profile.statementsPerStep} | ${r.profile.planMsPerStep} | ${r.profile.execMsPerStep} | ${r.profile.planMsPerStatement} | ${r.profile.nodeCpuMsPerStep} |`,
    ),
    "",
    "The statements that took the most PostgreSQL time, per loop call (calls per step; planning and execution per call, ms):",
    "",
    "| run | agents | statement | calls per step | planning ms per call | execution ms per call |",
    "| --- | --- | --- | --- | --- | --- |",
    ...results.core.flatMap((r) =>
      r.profile.statements.map(
        (st) =>
          `| core, ${r.kind} plans | ${r.agents} | ${st.label.replaceAll("|", "\\|")} | ${st.callsPerStep} | ${st.planMsPerCall} | ${st.execMsPerCall} |`,
      ),
    ),
    "",
    `MCP \`ping\`, ${results.mcp.ping.agents} agents: ${results.mcp.ping.callsPerSecond} calls/s, p50 ${results.mcp.ping.latency.p50} ms, p99 ${results.mcp.ping.latency.p99} ms` +
      (results.mcp.modern
        ? ` on 2025-11-25; ${results.mcp.modern.ping.callsPerSecond} calls/s, p50 ${results.mcp.modern.ping.latency.p50} ms, p99 ${results.mcp.modern.ping.latency.p99} ms on 2026-07-28. `
        : ". ") +
      `Server memory after start ${results.mcp.serverRssAtStartMb} MB; peak per run: ${results.mcp.loops.map((r) => `${r.agents} agents ${r.peakServerRssMb} MB`).join(", ")}.`,
    "",
    `The server's own CPU (user + system time of its processes) per call, one client, ${results.mcp.serverCpu.callsPerRun} calls a run; the median of the runs, then each run's figure (ms):`,
    "",
    "| call | CPU ms per call | runs |",
    "| --- | --- | --- |",
    ...(
      [
        ["MCP `ping`, server", results.mcp.serverCpu.ping],
        ["MCP `get_plan_status`, server", results.mcp.serverCpu.getPlanStatus],
        [
          "MCP loop (`create_research_plan`, `get_next_step`, `submit_step_result`), server",
          results.mcp.serverCpu.loop,
        ],
        ["the same loop in process, this process", results.mcp.serverCpu.inProcessLoop],
      ] as const
    ).map(([label, figure]) => `| ${label} | ${figure.msPerCall} | ${figure.runs.join(", ")} |`),
    "",
    `With no call in flight the server used ${results.mcp.serverCpu.idleMsPerSecond} ms of CPU a second (its timers), included above. PostgreSQL ran ${results.mcp.serverCpu.statementsPerLoopCall.mcp} statements per loop call over MCP and ${results.mcp.serverCpu.statementsPerLoopCall.inProcess} in process (the medians).${results.mcp.serverCpu.host ? ` The host's steal over the measured runs: ${results.mcp.serverCpu.host.stealPercent}%; the disks' ms per write / flush: ${diskCell(results.mcp.serverCpu)}.` : ""}`,
    "",
    "## 5. Scale (in process, one connection per size, the sizes called in turn)",
    "",
    "| plans | steps | audit rows | seeded in s | get_next_step p50 | p99 | get_plan_status p50 | p99 |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...results.scale.points.map(
      (p) =>
        `| ${p.plans} | ${p.steps} | ${p.auditRows} | ${p.seedSeconds} | ${p.getNextStep.p50} | ${p.getNextStep.p99} | ${p.getPlanStatus.p50} | ${p.getPlanStatus.p99} |`,
    ),
    "",
    ...(search.measured
      ? [
          "| artifacts | seeded in s | search_sources p50 | p99 |",
          "| --- | --- | --- | --- |",
          ...search.points.map(
            (p) => `| ${p.artifacts} | ${p.seedSeconds} | ${p.latency.p50} | ${p.latency.p99} |`,
          ),
        ]
      : [`search_sources: ${search.reason}.`]),
    "",
    page.measured
      ? `Plan page with 200 steps and 10,000 audit rows, signed in, whole response on loopback: p50 ${page.latency.p50} ms, p99 ${page.latency.p99} ms (${page.latency.count} loads).`
      : `Plan page render: ${page.reason}.`,
    "",
    "## 6. Server-run steps",
    "",
    results.serverSteps.measured
      ? `${results.serverSteps.plans} plans of 10 steps, the first ${results.serverSteps.serverStepsPerCall} search_sources steps run by Cairn over ${results.serverSteps.artifacts} artifacts: the get_next_step that runs them and hands out step 6 takes p50 ${results.serverSteps.latency.p50} ms, p99 ${results.serverSteps.latency.p99} ms, and sends ${results.serverSteps.roundTrips} statements (median), of which ${results.serverSteps.toolReads} are the tools' own reads.`
      : `Server-run steps: ${results.serverSteps.reason}.`,
    "",
  ];
  return lines.join("\n");
}
