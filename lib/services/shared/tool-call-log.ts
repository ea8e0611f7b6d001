/**
 * The MCP tool-call log (docs/execution-loop.md, last paragraph):
 * one row per tool call except ping, written after the response so it never
 * delays or fails the call. Rows are gathered for a fifth of a second and
 * written with one INSERT, so even one agent's calls cost the database one
 * statement per batch instead of one per call (docs/performance.md,
 * 2026-11-28). The route hands `toolCallLogWritten()` to Next's `after()`, and
 * the production server's own door (server.ts) waits for it at shutdown, so
 * rows gathered when it stops are written. A lost row is logged to the console, nothing more (a
 * warning while the database is unavailable).
 */
import "server-only";
import { z } from "zod";
import type { Database } from "../../db/client";
import { jsonParam, run, statement } from "../../db/statement";
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
const FLUSH_AFTER_MS = 200;
const MAX_BATCH = 500;

/**
 * A batch of any size as one fixed statement (one JSON parameter), so every
 * batch reuses one prepared statement instead of naming a text per row count.
 */
const insertRows = statement(
  "write tool-call log rows",
  `insert into mcp_tool_call_log (tenant_id, api_key_id, oauth_grant_id, tool_name, duration_ms,
    is_error, error_code, error_message, request_bytes, response_bytes)
  select r."tenantId", r."apiKeyId", r."oauthGrantId", r."toolName", r."durationMs", r."isError",
    r."errorCode", r."errorMessage", r."requestBytes", r."responseBytes"
  from jsonb_to_recordset($1::jsonb) as r("tenantId" uuid, "apiKeyId" uuid, "oauthGrantId" uuid,
    "toolName" text, "durationMs" float8, "isError" boolean, "errorCode" text,
    "errorMessage" text, "requestBytes" int, "responseBytes" int)`,
  z.never(),
);

const pending = new Map<Database, ToolCallRecord[]>();
/** The batch still taking rows; settles once they are written (or given up). */
let gathering: Promise<void> | undefined;
/** The batches written so far; settles once the last one is. */
let writing: Promise<void> = Promise.resolve();

function writeBatch(): Promise<void> {
  const writes: Promise<unknown>[] = [];
  for (const [db, records] of pending) {
    pending.delete(db);
    for (let i = 0; i < records.length; i += MAX_BATCH) {
      writes.push(
        run(db, insertRows, [jsonParam(records.slice(i, i + MAX_BATCH))]).catch((error: unknown) =>
          // A database unavailable for now (a failover, a restart) is expected,
          // not a fault to investigate: one line, no stack.
          isDatabaseUnavailable(error)
            ? logWarning("Could not write the tool-call log; these calls' rows are lost", error)
            : logUnexpected("Could not write the tool-call log", error),
        ),
      );
    }
  }
  return Promise.all(writes).then(() => {});
}

export function recordToolCallLater(db: Database, record: ToolCallRecord): void {
  const records = pending.get(db);
  if (records) records.push(record);
  else pending.set(db, [record]);
  gathering ??= new Promise((resolve) => setTimeout(resolve, FLUSH_AFTER_MS)).then(() => {
    gathering = undefined;
    writing = Promise.all([writing, writeBatch()]).then(() => {});
    return writing;
  });
}

/** Settles once every row recorded so far is written or given up (never rejects). */
export function toolCallLogWritten(): Promise<void> {
  return gathering ?? writing;
}
