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
 */
import "server-only";
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

/**
 * `first`'s statement, then `stmt`, in one transaction; `stmt`'s rows. Each
 * statement reads what committed before it started, so `stmt` reads what a
 * lock `first` waited for protected. An ordinary transaction, not pipelined:
 * a pipelined one (begin to commit written at once) was measured about a
 * fifth faster on a shared plan, but a statement postgres.js sends again (a
 * prepared statement a pooler lost) or cancels at a deadline would then land
 * outside the transaction or out of order (docs/performance.md, "A submit
 * behind another call").
 */
export async function runAfter<Row>(
  db: Database,
  first: { stmt: Statement<unknown>; params: readonly unknown[] },
  stmt: Statement<Row>,
  params: readonly unknown[],
): Promise<Row[]> {
  return db.transaction(async (tx) => {
    await run(tx, first.stmt, first.params);
    return run(tx, stmt, params);
  });
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
 * prepared statement.
 */
export const arrayParam = (values: readonly string[]): string =>
  `{${values.map((value) => `"${value.replace(/["\\]/g, "\\$&")}"`).join(",")}}`;

/** JSON text for a `$n::jsonb` parameter. */
export const jsonParam = (value: unknown): string => JSON.stringify(value);
