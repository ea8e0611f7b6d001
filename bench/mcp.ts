/**
 * Section 4, Cairn over MCP: the same loop through /api/mcp of the production
 * build, one official SDK client per agent over Streamable HTTP with an API
 * key, the audit trail and the tool-call log on (they always are). `ping` in a
 * loop through the same server is the transport's own ceiling. The server's
 * memory is sampled throughout and its peak during the 32-agent run reported.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Sql } from "postgres";
import type { NextStep } from "@/lib/services/get-next-step";
import { OWN_PLAN_STEPS } from "./core";
import { type CairnCalls, type LoopRun, runOwnPlans } from "./support/agents";
import type { NextServer } from "./support/next-server";
import { closedLoop, round, sleep, summarise } from "./support/stats";
import { type Verification, verifyRun } from "./support/verify";

export type McpLoopRun = Omit<LoopRun, "planIds"> & {
  verification: Verification;
  peakServerRssMb: number;
};

export type PingRun = {
  agents: number;
  callsPerSecond: number;
  latency: ReturnType<typeof summarise>;
};

export type McpSection = {
  ping: PingRun;
  loops: McpLoopRun[];
  serverRssAtStartMb: number;
  /** The tools the server lists, to tell which features this build has. */
  toolNames: string[];
};

type Agent = { client: Client; calls: CairnCalls };

async function connect(mcpUrl: string, key: string): Promise<Agent> {
  const client = new Client({ name: "cairn-bench-agent", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  const call = async <T>(name: string, args: Record<string, unknown>): Promise<T> => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) {
      const first = Array.isArray(result.content) ? result.content[0] : undefined;
      throw new Error(`${name} failed: ${first?.type === "text" ? first.text : "no text"}`);
    }
    return result.structuredContent as T;
  };
  return {
    client,
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

export async function runMcp(
  server: NextServer,
  key: string,
  levels: readonly number[],
  pingAgents: number,
  verifySql: Sql,
  durationMs: number,
): Promise<McpSection> {
  const serverRssAtStartMb = round(server.rssMb(), 1);
  const agents: Agent[] = [];
  try {
    for (let i = 0; i < Math.max(pingAgents, ...levels); i += 1) {
      agents.push(await connect(server.mcpUrl, key));
    }
    const first = agents[0] as Agent;
    const { tools } = await first.client.listTools();

    // Warm-up: the first requests compile the route's modules and fill the pool.
    await runOwnPlans(
      agents.slice(0, pingAgents).map((agent) => agent.calls),
      OWN_PLAN_STEPS,
      1_000,
    );

    const pings = await closedLoop(pingAgents, durationMs, async (i) => {
      await (agents[i] as Agent).client.callTool({ name: "ping", arguments: {} });
    });
    const ping: PingRun = {
      agents: pingAgents,
      callsPerSecond: round((pings.samples.length / pings.elapsedMs) * 1000, 1),
      latency: summarise(pings.samples),
    };

    // The tool-call log is written in batches after the responses: give the
    // last batch time to land before counting.
    const loggedCalls = async () => {
      await sleep(500);
      const [row] = await verifySql<
        { n: number }[]
      >`select count(*)::int as n from mcp_tool_call_log`;
      return row?.n ?? 0;
    };
    const loops: McpLoopRun[] = [];
    for (const count of levels) {
      const team = agents.slice(0, count).map((agent) => agent.calls);
      const loggedBefore = await loggedCalls();
      const { value: run, peak } = await withPeakMemory(server, () =>
        runOwnPlans(team, OWN_PLAN_STEPS, durationMs),
      );
      const logged = (await loggedCalls()) - loggedBefore;
      const verification = await verifyRun(verifySql, run);
      if (logged !== run.calls) {
        verification.violations.push(`${logged} tool-call log rows for ${run.calls} tool calls`);
      }
      const { planIds: _, ...figures } = run;
      loops.push({ ...figures, verification, peakServerRssMb: round(peak, 1) });
    }
    return { ping, loops, serverRssAtStartMb, toolNames: tools.map((tool) => tool.name) };
  } finally {
    await Promise.all(agents.map((agent) => agent.client.close()));
  }
}
