/**
 * Raw SQL results come back as `{ rows }` from PGlite and as an array from
 * postgres.js; this helper gives both as an array, each row parsed with the
 * caller's zod schema, so a renamed column or a changed type fails at the read
 * (as the loop's fixed statements do, `statement.ts`). For the queries that
 * drizzle's builder cannot express (CTEs, `skip locked` claims, SQL functions).
 */
import type { SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Executor } from "./client";

export async function selectRows<Row>(
  db: Executor,
  row: z.ZodType<Row>,
  query: SQL,
): Promise<Row[]> {
  const result = (await db.execute(query)) as unknown as { rows?: unknown[] } | unknown[];
  const rows = Array.isArray(result) ? result : (result.rows ?? []);
  return rows.map((value) => row.parse(value));
}
