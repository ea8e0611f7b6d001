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
import type { NextStep } from "@/lib/services/plans/get-next-step";
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

export type McpSession = {
  /** The tools the server lists, to tell which features this build has. */
  toolNames: string[];
  serverRssAtStartMb: number;
  ping(agents: number, durationMs: number): Promise<PingRun>;
  loop(agents: number, durationMs: number): Promise<McpLoopRun>;
  close(): Promise<void>;
};

/** Connects `maxAgents` clients to the server and warms the route up. */
export async function openMcpSession(
  server: NextServer,
  key: string,
  maxAgents: number,
  verifySql: Sql,
): Promise<McpSession> {
  const serverRssAtStartMb = round(server.rssMb(), 1);
  const agents: Agent[] = [];
  const close = () => Promise.all(agents.map((agent) => agent.client.close())).then(() => {});
  try {
    for (let i = 0; i < maxAgents; i += 1) agents.push(await connect(server.mcpUrl, key));
    const { tools } = await (agents[0] as Agent).client.listTools();
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
        const pings = await closedLoop(count, durationMs, async (i) => {
          await (agents[i] as Agent).client.callTool({ name: "ping", arguments: {} });
        });
        return {
          agents: count,
          callsPerSecond: round((pings.samples.length / pings.elapsedMs) * 1000, 1),
          latency: summarise(pings.samples),
        };
      },
      async loop(count, durationMs) {
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
        return { ...figures, verification, peakServerRssMb: round(peak, 1) };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
