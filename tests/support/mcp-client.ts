import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

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

  /** Calls a tool that must succeed and returns its structured content. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the tool returned
  async function ok(name: string, args: Record<string, unknown> = {}): Promise<any> {
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
