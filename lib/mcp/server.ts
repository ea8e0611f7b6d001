/**
 * Cairn's MCP server: tools (tools/list, tools/call), the research skills as
 * prompts (lib/mcp/prompts.ts) and plans as resources (lib/mcp/resources.ts),
 * all on the SDK's low-level handlers. The tool list, with every zod schema
 * converted to JSON Schema, and the prompt list are built once per process
 * rather than on each request; the route (lib/mcp/http-handler.ts) attaches
 * these handlers once to each pooled server.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolRequest,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { AppError } from "../plan-engine/app-error";
import { notificationsQueued } from "../services/notifications/queued";
import { kickIfQueuedSince } from "../services/notifications/runtime";
import { recordToolCallLater } from "../services/shared/tool-call-log";
import { refuseUnknownFields } from "../services/shared/validation";
import type { ToolDefinition } from "./define-tool";
import { registerCairnPrompts } from "./prompts";
import { type CairnServerDeps, principalOf, serviceContextFor } from "./request-context";
import { registerCairnResources } from "./resources";
import { toolError, toolSuccess } from "./tool-result";
import { TOOLS } from "./tools";

export const SERVER_INFO = { name: "cairn", title: "Cairn research plans", version: "0.1.0" };

export const SERVER_INSTRUCTIONS =
  "Cairn keeps research plans durable across sessions. For a research request, follow the `research` prompt (interview, routing, log_skill_execution, search_sources for prior research, plan, execute, deliver). Create a plan with create_research_plan, then loop: get_next_step -> do the work (store findings with store_research) -> submit_step_result, until get_next_step answers plan_complete; then store_research_output and submit_research_feedback. Pause for a person with request_user_review. To resume in a new session: list_active_plans (or the cairn://plans/active resource), get_research_context, get_next_step. Every error text starts with a code (VALIDATION_ERROR, NOT_FOUND, INVALID_TRANSITION, CONFLICT, ...) followed by how to recover.";

export const SERVER_CAPABILITIES = {
  tools: { listChanged: false },
  prompts: { listChanged: false },
  resources: { subscribe: false, listChanged: false },
  logging: {},
};

/**
 * An input object says `additionalProperties: false` (unless it is open on
 * purpose, with a catchall): every tool refuses a field it does not know
 * (`refuseUnknownFields`), so the published schema says the same.
 */
function jsonSchema(schema: z.ZodType, io: "input" | "output") {
  return z.toJSONSchema(schema, {
    target: "draft-7",
    io,
    unrepresentable: "any",
    override: ({ zodSchema, jsonSchema: node }) => {
      const def = zodSchema._zod.def;
      if (io === "input" && def.type === "object" && def.catchall === undefined) {
        node.additionalProperties = false;
      }
    },
  }) as Tool["inputSchema"];
}

const TOOL_LIST: Tool[] = TOOLS.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: jsonSchema(tool.inputSchema, "input"),
  outputSchema: jsonSchema(tool.outputSchema, "output"),
  annotations: { title: tool.title, ...tool.annotations },
}));

const TOOLS_BY_NAME = new Map<string, ToolDefinition>(
  TOOLS.map((tool) => [tool.name, tool as ToolDefinition]),
);

export type { CairnServerDeps };
export { principalOf };

/** Attaches every handler Cairn serves to a fresh McpServer. */
export function registerCairnServer(server: McpServer, deps: CairnServerDeps): void {
  registerCairnTools(server, deps);
  registerCairnPrompts(server);
  registerCairnResources(server, deps);
}

/**
 * The size of a call's arguments as JSON. Arguments nested thousands of levels
 * deep (which every tool refuses) overflow JSON.stringify's stack: 0 then,
 * rather than an exception that would turn the tool's answer into an internal error.
 */
function jsonBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value));
  } catch {
    return 0;
  }
}

/**
 * tools/call, matched by its method alone. Registered with CallToolRequestSchema,
 * a request that schema refuses (`arguments` that is not an object, a `name`
 * that is not a string) fails the SDK's generic parse first and is answered
 * -32603 Internal error; matched by method, it reaches the SDK Server's own
 * tools/call check, which answers -32602 Invalid params, as a caller's mistake.
 */
const TOOLS_CALL = z.object({ method: z.literal("tools/call") }).loose();

function registerCairnTools(server: McpServer, deps: CairnServerDeps): void {
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }));
  server.server.setRequestHandler(TOOLS_CALL, async (raw, extra) => {
    // The SDK's Server checked it against CallToolRequestSchema before this runs.
    const request = raw as unknown as CallToolRequest;
    const tool = TOOLS_BY_NAME.get(request.params.name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool "${request.params.name}". Call tools/list for the tools Cairn offers.`,
      );
    }
    const principal = principalOf(extra.authInfo);
    if (!principal) {
      return toolError(new AppError("UNAUTHORIZED", "This call carries no valid API key."));
    }
    const db = await deps.getDb();
    const ctx = serviceContextFor(deps, db, principal);
    const started = performance.now();
    const args = request.params.arguments ?? {};
    let result: CallToolResult;
    let errorCode: string | null = null;
    const queuedBefore = notificationsQueued();
    try {
      // Here for every tool, whether or not its use case parses its input.
      refuseUnknownFields(tool.inputSchema, args);
      result = toolSuccess((await tool.run(ctx, args)) as object);
    } catch (error) {
      const failure = toolError(error);
      errorCode = failure.errorCode;
      result = { content: failure.content, isError: true };
    }
    // The call's transaction has committed: send what it queued now, in the background.
    kickIfQueuedSince(queuedBefore);
    if (!tool.skipCallLog) {
      const text = result.content[0]?.type === "text" ? result.content[0].text : "";
      recordToolCallLater(db, {
        tenantId: principal.tenantId,
        apiKeyId: principal.kind === "api_key" ? principal.credentialId : null,
        oauthGrantId: principal.kind === "oauth_app" ? principal.credentialId : null,
        toolName: tool.name,
        durationMs: performance.now() - started,
        isError: result.isError === true,
        errorCode,
        requestBytes: jsonBytes(args),
        responseBytes: Buffer.byteLength(text),
      });
    }
    return result;
  });
}
