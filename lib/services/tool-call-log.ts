/**
 * The MCP tool-call log (execution-loop.md, "Audit Trail", last paragraph):
 * one row per tool call except ping, written after the response so it never
 * delays or fails the call. A lost row is logged to the console, nothing more.
 */
import type { Database } from "../db/client";
import { mcpToolCallLog } from "../db/schema";

export type ToolCallRecord = {
  tenantId: string;
  apiKeyId: string | null;
  toolName: string;
  durationMs: number;
  isError: boolean;
  errorCode: string | null;
  requestBytes: number;
  responseBytes: number;
};

export function recordToolCallLater(db: Database, record: ToolCallRecord): void {
  setImmediate(() => {
    db.insert(mcpToolCallLog)
      .values(record)
      .catch((error: unknown) => console.error("Could not write the tool-call log:", error));
  });
}
