/**
 * Section 4, Cairn over MCP: the same loop through /api/mcp of the production
 * build, one official SDK client per agent over Streamable HTTP with an API
 * key, in each protocol era (the 1.x client on 2025-11-25, the SDK v2 client
 * pinned to 2026-07-28), the audit trail and the tool-call log on (they always are). `ping` in a
 * loop through the same server is the transport's own ceiling. The server's
 * memory is sampled throughout and its peak during the 32-agent run reported;
 * its CPU per call is measured with one client (bench/server-cpu.ts).
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Sql } from "postgres";
import type { NextStep } from "@/lib/services/plans/next-step-output";
import { OWN_PLAN_STEPS, statementsRun } from "./core";
import { measureServerCpu, type ServerCpu } from "./server-cpu";
import { type CairnCalls, type LoopRun, runOwnPlans } from "./support/agents";
import { type HostShare, startHostClock } from "./support/host";
import type { NextServer } from "./support/next-server";
import { closedLoop, round, sleep, summarise } from "./support/stats";
import { type Verification, verifyRun } from "./support/verify";

export type McpLoopRun = Omit<LoopRun, "planIds"> & {
  verification: Verification;
  peakServerRssMb: number;
  /** The host's steal over the timed run (bench/support/host.ts). */
  host?: HostShare;
};

export type PingRun = {
  agents: number;
  callsPerSecond: number;
  latency: ReturnType<typeof summarise>;
  /** The host's steal over the timed run (bench/support/host.ts). */
  host?: HostShare;
};

/** The protocol revision an MCP run's clients speak. */
export type Revision = "2025-11-25" | "2026-07-28";

export type McpSection = {
  ping: PingRun;
  loops: McpLoopRun[];
  serverRssAtStartMb: number;
  toolNames: string[];
  /** The same ping and loops by clients that speak only revision 2026-07-28. */
  modern?: { ping: PingRun; loops: McpLoopRun[] };
  serverCpu: ServerCpu;
};

type CallTool = (params: { name: string; arguments: Record<string, unknown> }) => Promise<{
  [key: string]: unknown;
  content?: unknown;
  isError?: unknown;
  structuredContent?: unknown;
}>;
type Agent = {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool: CallTool;
  /** A tool call whose error result throws; answers its structured content. */
  call<T>(name: string, args: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
  calls: CairnCalls;
};

/** One agent's client: the 1.x SDK on 2025-11-25, or the v2 client pinned to 2026-07-28. */
async function connectClient(mcpUrl: string, key: string, revision: Revision) {
  const requestInit = { headers: { Authorization: `Bearer ${key}` } };
  if (revision === "2026-07-28") {
    const client = new ModernClient(
      { name: "cairn-bench-agent", version: "2.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new ModernTransport(new URL(mcpUrl), { requestInit }));
    return client;
  }
  const client = new Client({ name: "cairn-bench-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit }));
  return client;
}

async function connect(mcpUrl: string, key: string, revision: Revision): Promise<Agent> {
  const client = await connectClient(mcpUrl, key, revision);
  const callTool: CallTool = (params) => client.callTool(params);
  const call = async <T>(name: string, args: Record<string, unknown>): Promise<T> => {
    const result = await callTool({ name, arguments: args });
    if (result.isError) {
      const first = Array.isArray(result.content) ? result.content[0] : undefined;
      throw new Error(`${name} failed: ${first?.type === "text" ? first.text : "no text"}`);
    }
    return result.structuredContent as T;
  };
  return {
    listTools: () => client.listTools(),
    callTool,
    call,
    close: () => client.close(),
    calls: {
      createPlan: (input) => call("create_research_plan", input),
      getNextStep: (planId) => call<NextStep>("get_next_step", { planId }),
      submitStepResult: (input) => call("submit_step_result", input),
    },
  };
}

/** Samples the server's memory every 100 ms while `fn` runs; returns the peak in MB. */
async function withPeakMemory<T>(server: NextServer, fn: () => Promise<T>) {
  let peak = server.rssMb();
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, server.rssMb());
      await sleep(100);
    }
  })();
  try {
    const value = await fn();
    return { value, peak };
  } finally {
    running = false;
    await sampler;
  }
}

export type McpSession = {
  /** The tools the server lists, to tell which features this build has. */
  toolNames: string[];
  serverRssAtStartMb: number;
  ping(agents: number, durationMs: number): Promise<PingRun>;
  loop(agents: number, durationMs: number): Promise<McpLoopRun>;
  /** The server's CPU per call from one client of this revision, beside `inProcess`'s loop. */
  serverCpu(inProcess: CairnCalls, calls: number, repetitions: number): Promise<ServerCpu>;
  close(): Promise<void>;
};

/** Connects `maxAgents` clients of one revision to the server and warms the route up. */
export async function openMcpSession(
  server: NextServer,
  key: string,
  maxAgents: number,
  verifySql: Sql,
  revision: Revision,
): Promise<McpSession> {
  const serverRssAtStartMb = round(server.rssMb(), 1);
  const agents: Agent[] = [];
  const close = () => Promise.all(agents.map((agent) => agent.close())).then(() => {});
  try {
    for (let i = 0; i < maxAgents; i += 1) agents.push(await connect(server.mcpUrl, key, revision));
    const { tools } = await (agents[0] as Agent).listTools();
    // The first requests load the route's modules and fill the connection pool.
    await runOwnPlans(
      agents.slice(0, 8).map((agent) => agent.calls),
      OWN_PLAN_STEPS,
      1_000,
    );
    // The tool-call log is written in batches after the responses: give the
    // last batch time to land before counting.
    const loggedCalls = async () => {
      await sleep(500);
      const [row] = await verifySql<
        { n: number }[]
      >`select count(*)::int as n from mcp_tool_call_log`;
      return row?.n ?? 0;
    };
    return {
      toolNames: tools.map((tool) => tool.name),
      serverRssAtStartMb,
      async ping(count, durationMs) {
        const hostClock = startHostClock();
        const pings = await closedLoop(count, durationMs, async (i) => {
          await (agents[i] as Agent).callTool({ name: "ping", arguments: {} });
        });
        const host = hostClock();
        return {
          agents: count,
          callsPerSecond: round((pings.samples.length / pings.elapsedMs) * 1000, 1),
          latency: summarise(pings.samples),
          host,
        };
      },
      async loop(count, durationMs) {
        const team = agents.slice(0, count).map((agent) => agent.calls);
        const loggedBefore = await loggedCalls();
        const hostClock = startHostClock();
        const { value: run, peak } = await withPeakMemory(server, () =>
          runOwnPlans(team, OWN_PLAN_STEPS, durationMs),
        );
        const host = hostClock();
        const logged = (await loggedCalls()) - loggedBefore;
        const verification = await verifyRun(verifySql, run);
        if (logged !== run.calls) {
          verification.violations.push(`${logged} tool-call log rows for ${run.calls} tool calls`);
        }
        const { planIds: _, ...figures } = run;
        return { ...figures, verification, peakServerRssMb: round(peak, 1), host };
      },
      serverCpu(inProcess, calls, repetitions) {
        const probe = {
          async connect() {
            const agent = await connect(server.mcpUrl, key, revision);
            return {
              calls: agent.calls,
              ping: () => agent.call<void>("ping", {}),
              getPlanStatus: (planId: string) => agent.call<void>("get_plan_status", { planId }),
              close: () => agent.close(),
            };
          },
          serverCpuMs: () => server.cpuMs(),
          statementsRun: () => statementsRun(verifySql),
        };
        return measureServerCpu(probe, inProcess, calls, repetitions);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
