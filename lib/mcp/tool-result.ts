/**
 * The MCP door's one error adapter: an expected failure becomes a tool result
 * with `isError: true` whose text starts with the error code and says how to
 * recover, so an LLM can act on it. A database that cannot serve the call for
 * now (lib/db/unavailable.ts) is DATABASE_UNAVAILABLE, to retry. Anything unexpected is logged and reported
 * as INTERNAL_ERROR without internals. Handlers that answer with a JSON-RPC
 * error instead (resources) go through `withoutInternals`.
 */
import {
  type CallToolResult,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/server";
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from "../db/unavailable";
import { logUnexpected, logWarning } from "../log";
import { isAppError } from "../plan-engine/app-error";

/**
 * The most JSON text an answer repeats as its text block. A larger answer (a
 * plan's context with a page of evidence) is sent once, as structuredContent,
 * with a short text saying so: repeating it doubled every large answer
 * (docs/protocol.md, "Results").
 */
export const TEXT_JSON_MAX_BYTES = 16 * 1024;

/** The answer as JSON for the model, then any text written for the person (`forPerson`). */
export function toolSuccess(
  value: object,
  forPerson: CallToolResult["content"] = [],
): CallToolResult {
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json, "utf8");
  const text =
    bytes <= TEXT_JSON_MAX_BYTES
      ? json
      : `The answer (${bytes.toLocaleString("en-US")} bytes of JSON, fields: ${Object.keys(value).join(", ")}) is in structuredContent and not repeated here.`;
  return {
    content: [{ type: "text", text }, ...forPerson],
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
  if (isDatabaseUnavailable(error)) {
    // Expected while the database fails over or restarts: the caller retries.
    logWarning("An MCP tool found the database unavailable", error);
    return {
      content: [{ type: "text", text: `DATABASE_UNAVAILABLE: ${DATABASE_UNAVAILABLE_MESSAGE}` }],
      isError: true,
      errorCode: "DATABASE_UNAVAILABLE",
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

/**
 * A request handler whose unexpected errors are logged (masked, lib/log.ts) and
 * answered as an internal error without their message: the SDK sends a thrown
 * error's message to the client as it is, and a failed query's names the
 * statement and its values. ProtocolErrors and AppErrors are meant for the client.
 */
export function withoutInternals<Args extends unknown[], Result>(
  handler: (...args: Args) => Promise<Result>,
): (...args: Args) => Promise<Result> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (error) {
      if (error instanceof ProtocolError || isAppError(error)) throw error;
      if (isDatabaseUnavailable(error)) {
        logWarning("An MCP request found the database unavailable", error);
        throw new ProtocolError(ProtocolErrorCode.InternalError, DATABASE_UNAVAILABLE_MESSAGE);
      }
      logUnexpected("Unexpected error in an MCP request", error);
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        "Cairn could not complete this request. Try again, and report it if it keeps happening.",
      );
    }
  };
}
