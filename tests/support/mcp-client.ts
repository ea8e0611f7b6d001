import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { z } from "zod";
import type { TOOLS } from "@/lib/mcp/tools";

type CairnTool = (typeof TOOLS)[number];
/** The name of a tool Cairn serves. */
export type ToolName = CairnTool["name"];
/** What a tool answers on success: its output schema's type. */
export type ToolOutput<Name extends ToolName> = z.output<
  Extract<CairnTool, { name: Name }>["outputSchema"]
>;

type KeysOfAny<T> = T extends unknown ? keyof T : never;
type ValueOfAny<T, K extends PropertyKey> = T extends unknown
  ? K extends keyof T
    ? T[K]
    : undefined
  : never;
/**
 * A tool's output as a test reads it: every field of every variant present and
 * not null, the first elements of a list present, and free-form JSON (a result,
 * bound inputs) as `any`. A test asserts the variant it expects (`status:
 * "ready"`) instead of narrowing to it, and a wrong field name is still a
 * compile error.
 */
export type Readable<T> = unknown extends T
  ? // biome-ignore lint/suspicious/noExplicitAny: free-form JSON reads as anything
    any
  : ReadableValue<NonNullable<T>>;
type ReadableValue<T> = T extends readonly (infer Item)[]
  ? Readable<Item>[] & Record<0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9, Readable<Item>>
  : T extends object
    ? { [K in KeysOfAny<T>]-?: Readable<ValueOfAny<T, K>> }
    : T;
/** What a tool accepts: its input schema's input type. */
export type ToolInput<Name extends ToolName> = z.input<
  Extract<CairnTool, { name: Name }>["inputSchema"]
>;

export type ToolAnswer = {
  isError: boolean;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the tool returned
  data: any;
};

/** An MCP client as an AI platform has one: the official SDK over Streamable HTTP, with an API key. */
export async function connectAgent(mcpUrl: string, key: string) {
  const client = new Client({ name: "cairn-test-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);

  async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
    const result = await client.callTool({ name, arguments: args });
    const first = Array.isArray(result.content) ? result.content[0] : undefined;
    const text = first && first.type === "text" ? String(first.text) : "";
    return { isError: result.isError === true, text, data: result.structuredContent };
  }

  /**
   * Calls a tool that must succeed and returns its structured content, typed by
   * the tool's output schema. Arguments stay loose: tests also send what a
   * schema refuses.
   */
  function ok<Name extends ToolName>(
    name: Name,
    args?: Record<string, unknown>,
  ): Promise<Readable<ToolOutput<Name>>>;
  // biome-ignore lint/suspicious/noExplicitAny: a name only known at run time answers whatever that tool returned
  function ok(name: string, args?: Record<string, unknown>): Promise<any>;
  async function ok(name: string, args: Record<string, unknown> = {}): Promise<unknown> {
    const answer = await call(name, args);
    if (answer.isError) throw new Error(`${name} failed: ${answer.text}`);
    if (JSON.stringify(answer.data) !== answer.text) {
      throw new Error(`${name}: the text block is not the structured content as JSON`);
    }
    return answer.data;
  }

  /** Calls a tool that must fail and returns its error text. */
  async function fails(name: string, args: Record<string, unknown> = {}): Promise<string> {
    const answer = await call(name, args);
    if (!answer.isError) throw new Error(`${name} should have failed but returned ${answer.text}`);
    return answer.text;
  }

  return { client, call, ok, fails, close: () => client.close() };
}

export type Agent = Awaited<ReturnType<typeof connectAgent>>;

export const report = {
  thinking: "Worked through the sources.",
  webSearches: [],
  webFetches: [],
  otherToolCalls: [],
  subagents: [],
};

/** submit_step_result's arguments with a plain result and report; `extra` overrides any field. */
export function plainResult(planId: string, stepId: string, extra: Record<string, unknown> = {}) {
  return {
    planId,
    stepId,
    result: { ok: true },
    resultSummary: "Done.",
    confidence: 0.5,
    stepExecutionReport: report,
    ...extra,
  };
}
