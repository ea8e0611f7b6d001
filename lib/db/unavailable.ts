/**
 * Whether an error means the database could not serve the call for now: no
 * connection (refused, closed, timed out), a server shutting down or starting
 * up, a standby refusing a write, a statement over its deadline, a commit the
 * server did not carry out. During a failover every call fails so until the
 * pool reaches the new primary; the doors answer these with a retryable error
 * (a tool error, HTTP 503 with Retry-After), never as an internal error.
 *
 * Recognised by codes, through drizzle's wrapping (`cause`), never by
 * `instanceof`: the production build bundles the drivers more than once.
 */

/** SQLSTATEs: class 08 (connection exception) is matched by its prefix. */
const UNAVAILABLE_SQLSTATES = new Set([
  "25006", // read_only_sql_transaction: a standby, or a primary being demoted
  "57014", // query_canceled: the statement deadline (statement_timeout)
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: starting up, or in recovery
  "53300", // too_many_connections
  "26000", // a prepared statement lost behind a transaction pooler (lib/db/postgres-client.ts)
  "42P05", // the same, the other way round
]);

/** postgres.js's and Node's codes for a connection that failed or went away. */
const UNAVAILABLE_DRIVER_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "COMMIT_NOT_CARRIED_OUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "EAI_AGAIN",
]);

/** Seconds a client is asked to wait before retrying (Retry-After). */
export const RETRY_AFTER_SECONDS = 2;

export const DATABASE_UNAVAILABLE_MESSAGE = `The database is unavailable (restarting, failing over, or unreachable); retry in ${RETRY_AFTER_SECONDS} seconds. A write whose answer was this error may or may not have been stored: read it back before repeating it.`;

export function isDatabaseUnavailable(error: unknown): boolean {
  let node = error;
  for (let depth = 0; node instanceof Error && depth < 5; depth += 1) {
    const code = (node as { code?: unknown }).code;
    if (typeof code === "string") {
      if (code.startsWith("08") && code.length === 5) return true;
      if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_DRIVER_CODES.has(code)) return true;
    }
    node = node.cause;
  }
  return false;
}
