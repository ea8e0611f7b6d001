/**
 * Raw SQL results come back as `{ rows }` from PGlite and as an array from
 * postgres.js; this helper gives both as an array, for the few queries that
 * drizzle's builder cannot express (search_sources' ranked CTEs).
 */
import type { SQL } from "drizzle-orm";
import type { Executor } from "./client";

export async function selectRows<T>(db: Executor, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows?: T[] } | T[];
  return Array.isArray(result) ? result : (result.rows ?? []);
}
