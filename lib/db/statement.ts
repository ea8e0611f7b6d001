/**
 * The loop's hot statements (lib/services/loop/sql): each is fixed text with
 * positional parameters, written once at module load, and sent to the driver
 * as it is, so no call rebuilds it from drizzle fragments and both drivers keep
 * one prepared statement (and its plan) per statement per connection (on
 * PostgreSQL unless CAIRN_PREPARED_STATEMENTS is off: lib/db/postgres-client.ts). The rows
 * are parsed with the statement's own zod schema here, at the boundary, so a
 * mistyped column fails on its first call in any test, and `Date | string`
 * (the two drivers return timestamps differently) never leaks past it.
 *
 * Values travel as parameters only: JSON as text (the statement casts it to
 * jsonb), times as ISO strings (cast to timestamptz).
 *
 * Two statements sent as one (`statementAfter`) are the exception to the
 * driver's prepared statements: the database's `run_after` prepares each of
 * them itself, in SQL, in the session it runs in, whether or not
 * CAIRN_PREPARED_STATEMENTS is off. A transaction pooler cannot lose them
 * between the check and the use: both happen in the one statement.
 */
import "server-only";
import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { z } from "zod";
import type { Database, Executor } from "./client";

export type Statement<Row> = {
  /** For logs and the benchmark: what the statement does, in a few words. */
  name: string;
  text: string;
  row: z.ZodType<Row>;
};

/**
 * The name leads the text as a comment, so pg_stat_statements and the
 * server's logs name the statement (the benchmark's per-statement table reads it).
 */
export function statement<Row>(name: string, text: string, row: z.ZodType<Row>): Statement<Row> {
  return { name, text: `/* ${name} */ ${text.trim()}`, row };
}

/** The driver client under drizzle's database or transaction (postgres.js `Sql` or PGlite). */
type DriverClient =
  | { unsafe(text: string, params: unknown[], options: { prepare: boolean }): Promise<unknown[]> }
  | { query(text: string, params: unknown[]): Promise<{ rows: unknown[] }> };

function driverOf(db: Executor): DriverClient {
  // drizzle keeps the session (and its client: the transaction's one inside a
  // transaction or savepoint) on the database object; it is not in the types.
  const client = (db as unknown as { session?: { client?: DriverClient } }).session?.client;
  if (!client) throw new Error("The database object has no driver client.");
  return client;
}

export async function run<Row>(
  db: Executor,
  stmt: Statement<Row>,
  params: readonly unknown[],
): Promise<Row[]> {
  const client = driverOf(db);
  const rows =
    "unsafe" in client
      ? await client.unsafe(stmt.text, [...params], { prepare: true })
      : (await client.query(stmt.text, [...params])).rows;
  return rows.map((row) => stmt.row.parse(row));
}

/** Two statements sent as one (`statementAfter`), for `runAfter` only. */
export type StatementAfter<Row> = Statement<Row> & {
  /** How many parameters each of the two takes. */
  readonly takes: readonly [number, number];
};

/**
 * `first`, then `then`, as one statement: `then`'s rows. Each reads what
 * committed before it started (the database's `run_after`, a volatile
 * function, gives each of its statements a snapshot of its own), so `then`
 * reads what a lock `first` waited for protected, and that lock is held from
 * its grant to the commit inside the one call. A transaction of the two held
 * it across two round trips and its commit's; a pipelined one (begin to
 * commit written at once) is one round trip too, but a statement postgres.js
 * sends again (a prepared statement a pooler lost) or cancels at a deadline
 * would then land outside the transaction or out of order
 * (docs/performance.md, "The submit behind a lock in one call"). The two texts
 * are part of this statement's own, so it is one prepared statement, and
 * `run_after` keeps each of them prepared in the session
 * (`drizzle/0035_run_after.sql`), so neither is planned again with the lock
 * held. The parameters travel as text, which each statement casts as it
 * always has; the rows come back through `to_jsonb`, so a column's value is
 * its JSON (a bigint or numeric a number, a timestamp ISO text).
 */
export function statementAfter<Row>(
  first: Statement<unknown>,
  then: Statement<Row>,
): StatementAfter<Row> {
  const quote = "$after$";
  const takes = [first, then].map(({ name, text }) => {
    if (text.includes(quote))
      throw new Error(`"${name}" holds ${quote}: it cannot run after another statement.`);
    // run_after rewrites each `$n` in the database with a plain search
    // (drizzle/0035_run_after.sql), which would rewrite one in a literal, a
    // comment or a name too: such a text is refused here, not changed there.
    if (asArrayParams(text) !== text.replace(/\$(\d+)/g, (_, n: string) => `($1[${n}])`)) {
      throw new Error(
        `"${name}" holds a $n in a literal, a comment or a name: it cannot run after another statement.`,
      );
    }
    return parametersTaken(text);
  });
  const combined = statement(
    `${first.name}, then ${then.name}`,
    `select answer from run_after(${quote}${first.text}${quote}, $1::text[],
      ${quote}${then.text}${quote}, $2::text[]) as answer`,
    z.object({ answer: z.unknown() }).transform(({ answer }) => then.row.parse(answer)),
  );
  return { ...combined, takes: [takes[0] ?? 0, takes[1] ?? 0] };
}

/**
 * `read`, a statement answering one JSON value (one row, one column) over the
 * parameters `$1`-`$n`, as an SQL expression of the statement that embeds it:
 * the database's `read_json` (`drizzle/0037_read_json.sql`) plans and runs it
 * only when the expression is evaluated, in the embedding statement's
 * snapshot. For a read that a statement rarely needs, in a branch: as a
 * sub-plan PostgreSQL would set it up on every execution. `params` are the
 * embedding statement's SQL expressions for `$1`-`$n`, in order; they travel
 * as text, which the read casts as it always has. Each evaluation plans the
 * read afresh, so it suits only what a few calls need.
 */
export function readWhenNeeded(read: string, params: readonly string[]): string {
  const quote = "$read$";
  // "$read" too: a read ending in it would close the quote with the quote's own "$".
  if (read.includes("$read")) throw new Error(`A read that holds "$read" cannot be embedded.`);
  const used = parametersTaken(read);
  if (used !== params.length) {
    throw new Error(`The read takes ${used} parameters; it was given ${params.length}.`);
  }
  return `read_json(${quote}${asArrayParams(read)}${quote}, array[${params.map((p) => `(${p})::text`).join(", ")}])`;
}

/** Drizzle's text for a query; it keeps no state between queries, so one serves every call. */
const dialect = new PgDialect();

/**
 * SQL text's parts in which a `$n` is text, not a parameter, each matched
 * whole so a scan steps over it: string literals (with backslash escapes
 * after an E that starts a token: `date'…'` is a plain literal), quoted
 * identifiers, dollar-quoted strings, comments (a line's ends at a newline or
 * carriage return); else a parameter `$n` (group 2). After a name's
 * character (a letter, digit, `_`, `$`, or any character past ASCII, as
 * PostgreSQL's lexer reads every byte past it), a `$` belongs to the name, so
 * it starts neither a dollar quote nor a parameter. The texts
 * are the code's own (values travel as parameters), all of whose parts are
 * closed. Block comments do not nest here (PostgreSQL's do), so a nested one
 * is refused (`replaceParameters`).
 */
const SQL_PARTS =
  /(?<![\w$\u0080-\uffff])[Ee]'(?:[^'\\]|\\[\s\S]|'')*'|'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n\r]*|\/\*[\s\S]*?\*\/|(?<![\w$\u0080-\uffff])\$([A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$[\s\S]*?\$\1\$|(?<![\w$\u0080-\uffff])\$(\d+)/g;

/** `text` with each parameter `$n` (none in a literal or comment) replaced by `to(n)`. */
function replaceParameters(text: string, to: (n: string) => string): string {
  return text.replace(SQL_PARTS, (part: string, _tag: unknown, n: string | undefined) => {
    if (n !== undefined) return to(n);
    if (part.startsWith("/*") && part.slice(2).includes("/*")) {
      throw new Error(
        "A statement's text holds a nested block comment, which this scan cannot read.",
      );
    }
    return part;
  });
}

/** The highest parameter `$n` the text takes (0 for none), literals and comments left out. */
function parametersTaken(text: string): number {
  let most = 0;
  replaceParameters(text, (n) => {
    most = Math.max(most, Number(n));
    return n;
  });
  return most;
}

/** `text` with each parameter `$n` read as the n-th element of one text[] parameter, `$1`. */
function asArrayParams(text: string): string {
  return replaceParameters(text, (n) => `($1[${n}])`);
}

/**
 * A query built with drizzle as a database function runs it with `EXECUTE
 * … USING` (`search_json`, `drizzle/0042_search_json.sql`): its text, each
 * `$n` read as `$1[n]`, and its values as one text[] parameter, which the
 * query casts where a value is not text. The function plans it on each call,
 * with the values in view.
 */
export function executedText(query: SQL): [text: string, params: string] {
  const { sql: text, params } = dialect.sqlToQuery(query);
  return [asArrayParams(text), arrayParam(params.map(paramText))];
}

/** A parameter as the text PostgreSQL reads it as, for `runAfter` and `executedText`. */
function paramText(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return String(value);
  }
  if (value instanceof Date) return value.toISOString();
  throw new Error("A parameter that travels as text is JSON text, a scalar or null.");
}

/**
 * `after`'s two statements, with their parameters, in one round trip
 * (`statementAfter`). On the database, not in a transaction: in one, the
 * lock would last until that transaction's end (and at REPEATABLE READ the
 * second statement would read the transaction's snapshot, not the holder's
 * change).
 */
export async function runAfter<Row>(
  db: Database,
  after: StatementAfter<Row>,
  firstParams: readonly unknown[],
  params: readonly unknown[],
): Promise<Row[]> {
  const given = [firstParams.length, params.length];
  if (given[0] !== after.takes[0] || given[1] !== after.takes[1]) {
    throw new Error(
      `"${after.name}" takes ${after.takes.join(" and ")} parameters; it was given ${given.join(" and ")}.`,
    );
  }
  return run(db, after, [
    arrayParam(firstParams.map(paramText)),
    arrayParam(params.map(paramText)),
  ]);
}

/** A timestamp from either driver, as an ISO string. */
export const isoTime = z
  .union([z.date(), z.string()])
  .transform((value) => new Date(value).toISOString());

/**
 * A list of the engine's constants (statuses) as SQL literals, for a fixed
 * statement's text. Only for constants: values always travel as parameters.
 */
export const sqlLiterals = (values: readonly string[]): string =>
  values.map((value) => `'${value.replaceAll("'", "''")}'`).join(", ");

/**
 * A PostgreSQL array literal of `values`, each quoted, for one `$n::text[]`
 * parameter, or `::uuid[]` or `::int[]` (PostgreSQL reads each quoted element
 * as the array's type): a list of any length is one statement text, so one
 * prepared statement. A null is the array's NULL.
 */
export const arrayParam = (values: readonly (string | null)[]): string =>
  `{${values.map((value) => (value === null ? "NULL" : `"${value.replace(/["\\]/g, "\\$&")}"`)).join(",")}}`;

/** JSON text for a `$n::jsonb` parameter. */
export const jsonParam = (value: unknown): string => JSON.stringify(value);
