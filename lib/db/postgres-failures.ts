/**
 * What a failed statement or commit tells the PostgreSQL client
 * (postgres-client.ts): a prepared statement lost behind a pooler, a standby's
 * read-only refusal, a lost connection, a commit not carried out.
 */
import "server-only";

/** The error a transaction whose connection closed under it fails with: a connection error, as postgres.js's. */
export function connectionClosed(): Error {
  return Object.assign(new Error("The database connection closed during the transaction."), {
    code: "CONNECTION_CLOSED",
  });
}

/** A commit PostgreSQL answered with something else than COMMIT: nothing was kept. */
export class CommitNotCarriedOut extends Error {
  readonly code = "COMMIT_NOT_CARRIED_OUT";
  constructor(answer: string) {
    super(`The database answered the commit with ${answer}: the transaction was not kept.`);
    this.name = "CommitNotCarriedOut";
  }
}

export const PREPARED_STATEMENT_MISSING = new Set(["26000", "42P05"]);
export const READ_ONLY = "25006";
/**
 * A connection lost under a statement (a server shut down or failed over) or
 * one that stopped answering (a statement past its deadline). Its pool is
 * replaced: postgres.js 3.4.9 keeps a lost connection's last error and fails
 * the first query it runs after reconnecting with it (its issue #1223), and a
 * connection whose host is gone holds every statement queued behind it.
 */
export const CONNECTION_LOST = new Set([
  "57P01",
  "57P02",
  "CONNECTION_CLOSED",
  "ECONNRESET",
  "CONNECT_TIMEOUT",
]);

/** The SQLSTATE or driver code of an error, through drizzle's wrapping. */
export function codeOf(error: unknown): string | undefined {
  let node = error;
  for (let depth = 0; node instanceof Error && depth < 5; depth += 1) {
    const code = (node as { code?: unknown }).code;
    if (typeof code === "string") return code;
    node = node.cause;
  }
  return undefined;
}
