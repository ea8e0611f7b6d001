/**
 * What Cairn writes to its log about an unexpected error. A failed query's
 * error from drizzle carries the whole statement and its parameters in its
 * message and stack, and those can be a webhook secret, a token hash or a
 * password hash; PostgreSQL's detail can quote a row's values. So a query's
 * failure is logged as its PostgreSQL code and message with quoted values
 * masked, followed by where it was raised, and nothing of the statement.
 */
import { DrizzleQueryError } from "drizzle-orm/errors";

type DatabaseCause = Error & { code?: unknown };

/** `"anything"` in a database message (a value that failed to parse, say) becomes `"…"`. */
function maskQuoted(text: string): string {
  return text.replace(/"[^"]*"/g, '"…"').replace(/\([^()]*\)=\([^()]*\)/g, "(…)=(…)");
}

/** The stack's frames (the lines after the message, which may span lines). */
function framesOf(error: Error): string {
  return (error.stack ?? "")
    .split("\n")
    .filter((line) => /^\s+at /.test(line))
    .join("\n");
}

/** One line for a warning: the error's message, or for a failed query what `describeForLog` says of it. */
export function messageForLog(error: unknown): string {
  if (error instanceof DrizzleQueryError) {
    const cause = error.cause as DatabaseCause | undefined;
    const code = typeof cause?.code === "string" ? ` (${cause.code})` : "";
    const reason = cause?.message ? `: ${maskQuoted(cause.message)}` : "";
    return `a database query failed${code}${reason}; the statement and its values are not logged`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The error with its stack, for an unexpected one. */
export function describeForLog(error: unknown): string {
  if (error instanceof DrizzleQueryError) return `${messageForLog(error)}\n${framesOf(error)}`;
  if (error instanceof Error) {
    const cause = error.cause === undefined ? "" : `\nCaused by: ${describeForLog(error.cause)}`;
    return `${error.stack ?? `${error.name}: ${error.message}`}${cause}`;
  }
  return String(error);
}

/**
 * Logs what the server's operator may want to know and nobody else may read
 * (why an address was refused, what a network answered), `error` masked as above.
 */
export function logWarning(what: string, error?: unknown): void {
  console.warn(error === undefined ? what : `${what} (${messageForLog(error)})`);
}

/** Logs an unexpected error, `what` saying what Cairn was doing. */
export function logUnexpected(what: string, error: unknown): void {
  console.error(`${what}: ${describeForLog(error)}`);
}
