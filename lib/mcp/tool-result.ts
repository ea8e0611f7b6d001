/**
 * The MCP door's one error adapter: an expected failure becomes a tool result
 * with `isError: true` whose text starts with the error code and says how to
 * recover, so an LLM can act on it. Anything unexpected is logged and reported
 * as INTERNAL_ERROR without internals.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { logUnexpected } from "../log";
import { isAppError } from "../plan-engine/app-error";

export function toolSuccess(value: object): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(value) }],
    structuredContent: value as Record<string, unknown>,
  };
}

export function toolError(error: unknown): CallToolResult & { errorCode: string } {
  if (isAppError(error)) {
    return {
      content: [{ type: "text", text: `${error.code}: ${error.message}` }],
      isError: true,
      errorCode: error.code,
    };
  }
  logUnexpected("Unexpected error in an MCP tool", error);
  return {
    content: [
      {
        type: "text",
        text: "INTERNAL_ERROR: Cairn could not complete this call; nothing was changed. Try again, and report it if it keeps happening.",
      },
    ],
    isError: true,
    errorCode: "INTERNAL_ERROR",
  };
}
