/**
 * Cairn's MCP server: tools (tools/list, tools/call), the research skills as
 * prompts (lib/mcp/prompts.ts) and plans as resources (lib/mcp/resources.ts),
 * all on the SDK's low-level handlers. The tool list, with every zod schema
 * converted to JSON Schema, and the prompt list are built once per process
 * rather than on each request; the route (lib/mcp/http-handler.ts) attaches
 * these handlers once to each pooled server.
 */
import {
  type CallToolResult,
  type InputRequiredResult,
  isInputRequiredResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type Tool,
} from "@modelcontextprotocol/server";
import type { z } from "zod";
import { AppError } from "../plan-engine/app-error";
import { notificationsQueued } from "../services/notifications/queued";
import { kickIfQueuedSince } from "../services/notifications/runtime";
import { recordToolCallLater } from "../services/shared/tool-call-log";
import { refuseUnknownFields } from "../services/shared/validation";
import { isAppOnly, mayCallAppOnly, reviewLinkWithoutCard } from "./apps";
import type { ToolDefinition } from "./define-tool";
import { registerCairnPrompts } from "./prompts";
import {
  publishedAnnotations,
  publishedInputSchema,
  publishedOutputSchema,
} from "./published-schema";
import { type CairnServerDeps, principalOf, serviceContextFor } from "./request-context";
import { registerCairnResources } from "./resources";
import {
  askForReview,
  carriesReviewAnswer,
  type ReviewClient,
  recordReviewAnswer,
  reviewCapableClient,
  reviewClientFor,
} from "./review-in-client";
import { toolError, toolSuccess, withoutInternals } from "./tool-result";
import { TOOLS } from "./tools";
import { getNextStepTool } from "./tools/get-next-step";

export const SERVER_INFO = { name: "cairn", title: "Cairn research plans", version: "0.1.0" };

export const SERVER_INSTRUCTIONS =
  "Cairn keeps research plans durable across sessions. For a research request, follow the `research` prompt (interview, routing, log_skill_execution, search_sources for prior research, plan, execute, deliver), fetching its later parts with get_skill when it says so. Create a plan with create_research_plan, then loop: get_next_step -> do the work (store findings with store_research) -> submit_step_result, until get_next_step answers plan_complete; then store_research_output and submit_research_feedback. Pause for a person with request_user_review. To resume in a new session: list_active_plans (or the cairn://plans/active resource), get_research_context, get_next_step. Every error text starts with a code (VALIDATION_ERROR, NOT_FOUND, INVALID_TRANSITION, CONFLICT, ...) followed by how to recover.";

export const SERVER_CAPABILITIES = {
  tools: { listChanged: false },
  prompts: { listChanged: false },
  resources: { subscribe: false, listChanged: false },
  logging: {},
};

/**
 * Cache hints of 2026-07-28 for the lists that only change with a new release
 * of Cairn (tools, prompts, resource templates, the discover answer): any
 * cache may keep them for an hour. The resource list is each account's plans,
 * so it and resources/read keep the SDK's default, private and not cached.
 */
const STABLE_FOR_AN_HOUR = { ttlMs: 3_600_000, cacheScope: "public" } as const;
export const SERVER_CACHE_HINTS = {
  "tools/list": STABLE_FOR_AN_HOUR,
  "prompts/list": STABLE_FOR_AN_HOUR,
  "resources/templates/list": STABLE_FOR_AN_HOUR,
  "server/discover": STABLE_FOR_AN_HOUR,
};

export const TOOL_LIST: Tool[] = TOOLS.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: publishedInputSchema(tool.inputSchema),
  outputSchema: publishedOutputSchema(tool.outputSchema),
  // The title once: `title` is what clients read since revision 2025-06-18
  // (before it, annotations.title), and every byte here is in every agent's context.
  annotations: publishedAnnotations(tool.annotations),
  ...(tool._meta ? { _meta: tool._meta } : {}),
}));

/**
 * What a 2026-07-28 client that did not declare the MCP Apps extension is
 * listed: every tool but the cards' own, which it could not render and would
 * show to its model (docs/mcp-apps.md, "What is listed to whom").
 */
const TOOL_LIST_WITHOUT_CARDS: Tool[] = TOOL_LIST.filter((tool) => !isAppOnly(tool));

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

/** How much of an error's text the tool-call log keeps: enough to read what went wrong. */
const LOGGED_MESSAGE_CHARS = 500;

/** A failed call's text as the agent got it, without its leading code (a column of its own). */
function logMessage(failure: ReturnType<typeof toolError>): string {
  const first = failure.content[0];
  const text = first?.type === "text" ? first.text : "";
  const message = text.startsWith(`${failure.errorCode}: `)
    ? text.slice(failure.errorCode.length + 2)
    : text;
  return message.length > LOGGED_MESSAGE_CHARS
    ? `${message.slice(0, LOGGED_MESSAGE_CHARS)}…`
    : message;
}

/** The review a get_next_step answer waits on, if it is awaiting_review. */
function pendingReviewOf(output: object) {
  const answer = output as z.output<typeof getNextStepTool.outputSchema>;
  return answer.status === "awaiting_review" ? answer.review : undefined;
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

function registerCairnTools(server: McpServer, deps: CairnServerDeps): void {
  // The list depends on what the request declares, never on the account: the
  // same request gets the same list, so the public cache hint holds.
  server.server.setRequestHandler("tools/list", (_request, requestCtx) => ({
    tools: mayCallAppOnly(requestCtx.mcpReq.envelope) ? TOOL_LIST : TOOL_LIST_WITHOUT_CARDS,
  }));
  // The SDK checked the request against the tools/call schema before this runs:
  // a `name` that is not a string or `arguments` that is not an object is -32602.
  server.server.setRequestHandler(
    "tools/call",
    withoutInternals(async (request, requestCtx) => {
      const tool = TOOLS_BY_NAME.get(request.params.name);
      if (!tool) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Unknown tool "${request.params.name}". Call tools/list for the tools Cairn offers.`,
        );
      }
      const principal = principalOf(requestCtx.http?.authInfo);
      if (!principal) {
        return toolError(new AppError("UNAUTHORIZED", "This call carries no valid API key."));
      }
      const db = await deps.getDb();
      const ctx = serviceContextFor(deps, db, principal);
      const started = performance.now();
      const args = request.params.arguments ?? {};
      let result: CallToolResult | InputRequiredResult;
      let errorCode: string | null = null;
      let errorMessage: string | null = null;
      const queuedBefore = notificationsQueued();
      // A 2026-07-28 client that can show its user a form (or open a page) gets
      // the person's review there (lib/mcp/review-in-client.ts); only
      // get_next_step asks, and only where the answer would count.
      const declared =
        tool.name === getNextStepTool.name
          ? reviewCapableClient(requestCtx.mcpReq.envelope)
          : undefined;
      try {
        // Here for every tool, whether or not its use case parses its input.
        refuseUnknownFields(tool.inputSchema, args);
        if (isAppOnly(tool) && !mayCallAppOnly(requestCtx.mcpReq.envelope)) {
          throw new AppError(
            "FORBIDDEN",
            `${tool.name} is for Cairn's MCP App cards, in hosts that render them: this client did not declare the MCP Apps extension (io.modelcontextprotocol/ui). Show the person the review page (request_user_review's reviewUrl) instead.`,
          );
        }
        // Whose answer a form would be is read only when a form is answered or due.
        let reviewClient: Promise<ReviewClient | undefined> | undefined;
        const clientOfReview = () => {
          reviewClient ??= declared ? reviewClientFor(ctx, declared) : Promise.resolve(undefined);
          return reviewClient;
        };
        const inputResponses = requestCtx.mcpReq.inputResponses;
        const answer =
          declared && carriesReviewAnswer(inputResponses)
            ? await recordReviewAnswer(ctx, await clientOfReview(), {
                planId: args.planId,
                inputResponses,
                requestState: requestCtx.mcpReq.requestState(),
              })
            : undefined;
        const output = (await tool.run(ctx, args)) as object;
        const pending = declared && answer?.kind !== "settled" && pendingReviewOf(output);
        const asking = pending ? await clientOfReview() : undefined;
        result =
          pending && asking
            ? await askForReview(
                requestCtx,
                asking,
                String(args.planId),
                pending,
                answer?.kind === "ask_again" ? answer.note : "",
              )
            : toolSuccess(output, reviewLinkWithoutCard(tool, output, requestCtx.mcpReq.envelope));
      } catch (error) {
        const failure = toolError(error);
        errorCode = failure.errorCode;
        errorMessage = logMessage(failure);
        result = { content: failure.content, isError: true };
      }
      // The call's transaction has committed: send what it queued now, in the background.
      kickIfQueuedSince(queuedBefore);
      if (!tool.skipCallLog) {
        // An input request (the review form) has no text: the call's answer is the retry's.
        const first = isInputRequiredResult(result) ? undefined : result.content[0];
        const text = first?.type === "text" ? first.text : "";
        recordToolCallLater(db, {
          tenantId: principal.tenantId,
          apiKeyId: principal.kind === "api_key" ? principal.credentialId : null,
          oauthGrantId: principal.kind === "oauth_app" ? principal.credentialId : null,
          toolName: tool.name,
          durationMs: performance.now() - started,
          isError: !isInputRequiredResult(result) && result.isError === true,
          errorCode,
          errorMessage,
          requestBytes: jsonBytes(args),
          responseBytes: Buffer.byteLength(text),
        });
      }
      return result;
    }),
  );
}
