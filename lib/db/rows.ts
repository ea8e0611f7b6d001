/**
 * Rows of a raw SQL statement, whichever driver ran it: postgres.js answers an
 * array of rows, PGlite an object with `rows`.
 */
import type { SQL } from "drizzle-orm";
import type { Executor } from "./client";

export async function queryRows<Row>(db: Executor, query: SQL): Promise<Row[]> {
  const result = (await db.execute(query)) as unknown as Row[] | { rows: Row[] };
  return Array.isArray(result) ? result : result.rows;
}
