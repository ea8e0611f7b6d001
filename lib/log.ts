/**
 * What Cairn writes to its log about an error. A failed query's error carries
 * the whole statement and its parameters (drizzle's in its message and stack;
 * postgres.js's and PGlite's as `query` and `parameters`/`params`), and those
 * can be a webhook secret, a token hash or a password hash; PostgreSQL's
 * detail can quote a row's values. So a query's failure is logged as its
 * PostgreSQL code and message with quoted values masked, followed by where it
 * was raised, and nothing of the statement.
 *
 * Such errors are recognised by their shape, never by `instanceof`: the
 * production build bundles drizzle's error class more than once, and an error
 * from one copy is no instance of another's.
 */

type Fields = Error & {
  cause?: unknown;
  code?: unknown;
  severity?: unknown;
  query?: unknown;
  params?: unknown;
  parameters?: unknown;
};

/**
 * Whether an error comes from a database query: it carries the statement or
 * its values (drizzle, postgres.js, PGlite), or PostgreSQL's severity and
 * SQLSTATE code, or drizzle's "Failed query" message.
 */
function isQueryError(error: unknown): error is Fields {
  if (!(error instanceof Error)) return false;
  const fields = error as Fields;
  return (
    "query" in fields ||
    "params" in fields ||
    "parameters" in fields ||
    (typeof fields.severity === "string" && typeof fields.code === "string") ||
    error.message.startsWith("Failed query:")
  );
}

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

/**
 * A failed query in one line: the SQLSTATE code and PostgreSQL's own message
 * (masked) of the innermost query error, which drizzle wraps in its own.
 */
function describeQueryError(error: Fields): string {
  let innermost = error;
  let code = typeof error.code === "string" ? error.code : undefined;
  // Drizzle's error wraps the driver's, whatever that one's shape.
  while (
    innermost.cause instanceof Error &&
    (isQueryError(innermost.cause) || innermost.message.startsWith("Failed query:"))
  ) {
    innermost = innermost.cause as Fields;
    if (typeof innermost.code === "string") code ??= innermost.code;
  }
  const message = innermost.message.startsWith("Failed query:") ? "" : innermost.message;
  const reason = message ? `: ${maskQuoted(message.split("\n")[0] ?? "")}` : "";
  return `a database query failed${code ? ` (${code})` : ""}${reason}; the statement and its values are not logged`;
}

/** One line for a warning: the error's message, or for a failed query what `describeForLog` says of it. */
export function messageForLog(error: unknown): string {
  if (isQueryError(error)) return describeQueryError(error);
  return error instanceof Error ? error.message : String(error);
}

/** The error with its stack, for an unexpected one. */
export function describeForLog(error: unknown): string {
  if (isQueryError(error)) return `${describeQueryError(error)}\n${framesOf(error)}`;
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

/** Drizzle's message of a failed query, as another library may have printed it into a line. */
const PRINTED_QUERY = /Failed query:[\s\S]*?\nparams: [^\n]*/g;

/** One argument of a console call, with any failed query in it masked. */
function masked(argument: unknown): unknown {
  if (typeof argument === "string") {
    return argument.replace(PRINTED_QUERY, describeQueryError(new Error("Failed query:")));
  }
  if (!(argument instanceof Error)) return argument;
  let node: unknown = argument;
  for (let depth = 0; node instanceof Error && depth < 10; depth += 1) {
    if (isQueryError(node)) return describeForLog(argument);
    node = node.cause;
  }
  return argument;
}

/**
 * For the server process: what other code logs of an error (Next.js's report
 * of an error a page or route threw, a library's) passes the same masking as
 * Cairn's own lines, so no path prints a statement's values.
 */
export function maskQueriesInConsole(
  target: Pick<Console, "error" | "warn" | "log" | "info"> = console,
): void {
  for (const level of ["error", "warn", "log", "info"] as const) {
    const original = target[level].bind(target);
    target[level] = (...args: unknown[]) => original(...args.map(masked));
  }
}
