/**
 * The plan PostgreSQL keeps for a statement once it stops planning each call:
 * its generic plan, made without the parameters' values, which the loop's
 * prepared statements run from for as long as their connection lives. A test
 * that a read goes by a key, not by a search that grows with what a plan
 * holds, reads this plan, on PGlite and on PostgreSQL 15 alike.
 */
import { type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { Database } from "@/lib/db/client";
import { readRows } from "./rows";

/**
 * The generic plan of `text` (parameters `$1`, `$2`, ...), explained for the
 * values `literals`: EXPLAIN EXECUTE takes no bind parameters, so each value
 * is written into the EXPLAIN as a quoted literal. With `seqScans: false`, a
 * table of a few rows shows the index a large one would be read through. With
 * `analyze`, the statement runs, and each node shows the rows it gave, how
 * many times it ran and (an index-only scan) how many rows it read from the
 * table; a statement that writes keeps its writes.
 */
export async function genericPlan(
  db: Database,
  text: string,
  literals: readonly (string | number)[],
  { seqScans = true, analyze = false }: { seqScans?: boolean; analyze?: boolean } = {},
): Promise<string> {
  const values = literals.map((value) => `'${String(value).replaceAll("'", "''")}'`);
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
    if (!seqScans) await tx.execute(sql`set local enable_seqscan = off`);
    await tx.execute(sql.raw(`prepare explained as ${text}`));
    try {
      // In a savepoint, so a failed EXPLAIN leaves the transaction able to
      // deallocate and its own error is the one thrown.
      const explained = await tx.transaction((explaining) =>
        readRows<{ "QUERY PLAN": string }>(
          explaining,
          sql.raw(
            `explain ${analyze ? "(analyze, costs off, timing off, summary off) " : ""}execute explained(${values.join(", ")})`,
          ),
        ),
      );
      return explained.map((row) => row["QUERY PLAN"]).join("\n");
    } finally {
      // A prepared statement outlives its transaction on the pooled connection.
      await tx.execute(sql`deallocate explained`);
    }
  });
}

/** The generic plan of a query as drizzle would send it; its parameters must be text or numbers. */
export function genericPlanOf(db: Database, query: SQL, options?: { seqScans?: boolean }) {
  const { sql: text, params } = new PgDialect().sqlToQuery(query);
  const literals = params.map((value) => {
    if (typeof value === "string" || typeof value === "number") return value;
    throw new Error(`genericPlanOf: a parameter of type ${typeof value} has no literal here`);
  });
  return genericPlan(db, text, literals, options);
}
