import {
  Client as ModernClient,
  type ClientOptions as ModernClientOptions,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { z } from "zod";
import { TEXT_JSON_MAX_BYTES } from "@/lib/mcp/tool-result";
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

/** The protocol revision a test's client speaks. */
export type ClientRevision = "2025-11-25" | "2026-07-28";
export const CLIENT_REVISIONS: readonly ClientRevision[] = ["2025-11-25", "2026-07-28"];

// The index signature admits the 1.x client's union with its pre-2025 `{ toolResult }` shape.
type CallToolAnswer = { [key: string]: unknown; content?: unknown; isError?: unknown };

/**
 * An MCP client as an AI platform has one, with an API key: on 2025-11-25 the
 * last 1.x SDK (`@modelcontextprotocol/sdk`, the `initialize` handshake), the
 * line most platforms still ship; on 2026-07-28 the SDK v2 client pinned to
 * that revision (`server/discover`, the per-request envelope, no handshake),
 * which fails instead of falling back if the server does not offer it.
 * `options.fetch` sees every HTTP exchange (a test reading statuses and headers).
 */
export async function connectAgent(
  mcpUrl: string,
  key: string,
  options: { fetch?: typeof fetch } = {},
) {
  const client = new Client({ name: "cairn-test-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: options.fetch,
  });
  await client.connect(transport);
  return agentOf(client, (name, args) => client.callTool({ name, arguments: args }));
}

/**
 * One MCP message (an initialize unless given) posted with a bearer key or
 * token, without a client: the answer's status and headers tell whether the
 * credential is accepted, and how a refusal is worded.
 */
export function postMcp(
  mcpUrl: string,
  token: string,
  message: { method: string; params?: unknown } = {
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "cairn-test", version: "1" },
    },
  },
): Promise<Response> {
  return fetch(mcpUrl, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      Authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...message }),
  });
}

/** The SDK v2 client pinned to 2026-07-28; `options` adds capabilities (elicitation). */
export async function connectModernAgent(
  mcpUrl: string,
  key: string,
  options: Omit<ModernClientOptions, "versionNegotiation"> = {},
) {
  const client = new ModernClient(
    { name: "cairn-test-agent", version: "2.0.0" },
    { ...options, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const transport = new ModernTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return agentOf(client, (name, args) => client.callTool({ name, arguments: args }));
}

/** The tool-calling agent of either client, with `client` for the rest of the protocol. */
function agentOf<C extends { close(): Promise<void> }>(
  client: C,
  callTool: (name: string, args: Record<string, unknown>) => Promise<CallToolAnswer>,
) {
  async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
    const result = await callTool(name, args);
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
    // A small answer repeats its JSON as text; a large one says where it is instead.
    const json = JSON.stringify(answer.data);
    const repeated =
      Buffer.byteLength(json, "utf8") <= TEXT_JSON_MAX_BYTES
        ? json === answer.text
        : answer.text.endsWith("is in structuredContent and not repeated here.");
    if (!repeated) {
      throw new Error(
        `${name}: the text block is neither the structured content as JSON nor its summary`,
      );
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
export type ModernAgent = Awaited<ReturnType<typeof connectModernAgent>>;
/** What a test of the plan loop needs from either client. */
export type LoopAgent = Pick<Agent, "call" | "ok" | "fails" | "close">;

/** An agent on the given revision (see connectAgent and connectModernAgent). */
export function connectAgentOn(
  revision: ClientRevision,
  mcpUrl: string,
  key: string,
): Promise<LoopAgent> {
  return revision === "2026-07-28" ? connectModernAgent(mcpUrl, key) : connectAgent(mcpUrl, key);
}

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
