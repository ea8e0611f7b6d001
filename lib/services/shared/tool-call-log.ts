/**
 * The MCP tool-call log (docs/execution-loop.md, last paragraph):
 * one row per tool call except ping, written after the response so it never
 * delays or fails the call. Rows are gathered for a few milliseconds and
 * written with one INSERT, so under load the log costs the database one
 * statement per batch instead of one per call. A lost row is logged to the
 * console, nothing more (a warning while the database is unavailable).
 */
import "server-only";
import type { Database } from "../../db/client";
import { mcpToolCallLog } from "../../db/schema";
import { isDatabaseUnavailable } from "../../db/unavailable";
import { logUnexpected, logWarning } from "../../log";

export type ToolCallRecord = {
  tenantId: string;
  apiKeyId: string | null;
  oauthGrantId: string | null;
  toolName: string;
  durationMs: number;
  isError: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  requestBytes: number;
  responseBytes: number;
};

/** Short enough that a row is stored well within a second of its call. */
const FLUSH_AFTER_MS = 20;
const MAX_BATCH = 500;

const pending = new Map<Database, ToolCallRecord[]>();
let flushScheduled = false;

function flush() {
  flushScheduled = false;
  for (const [db, records] of pending) {
    pending.delete(db);
    for (let i = 0; i < records.length; i += MAX_BATCH) {
      db.insert(mcpToolCallLog)
        .values(records.slice(i, i + MAX_BATCH))
        .catch((error: unknown) =>
          // A database unavailable for now (a failover, a restart) is expected,
          // not a fault to investigate: one line, no stack.
          isDatabaseUnavailable(error)
            ? logWarning("Could not write the tool-call log; these calls' rows are lost", error)
            : logUnexpected("Could not write the tool-call log", error),
        );
    }
  }
}

export function recordToolCallLater(db: Database, record: ToolCallRecord): void {
  const records = pending.get(db);
  if (records) records.push(record);
  else pending.set(db, [record]);
  if (!flushScheduled) {
    flushScheduled = true;
    setTimeout(flush, FLUSH_AFTER_MS);
  }
}
