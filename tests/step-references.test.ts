/**
 * A step's rows in other tables are found through an index. `plan_step` is
 * the table whose rows requests delete in number: modify_plan's remove_step
 * and revert_revision, from an agent's key. Each deleted step makes
 * PostgreSQL act on every row that refers to it (a cascade or a set null),
 * by a lookup on the referring column; without an index leading with that
 * column, the lookup was a scan of the whole table, every team's reviews,
 * decisions, artifacts, sources and claims, once per step deleted
 * (docs/performance.md, "A step's rows found by index"). Every foreign key to
 * `plan_step`, today's and any added later, on PGlite and PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { BACKENDS, freshDatabase } from "./support/databases";
import { readRows } from "./support/rows";

describe.each(BACKENDS)("the rows that refer to a step on %s", (backend) => {
  let handle: DatabaseHandle;

  beforeAll(async () => {
    handle = await freshDatabase(backend);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("are each found through an index that leads with the referring column", async () => {
    const references = await readRows<{
      name: string;
      table: string;
      column: string;
      indexes: { name: string; predicate: string | null }[];
    }>(
      handle.db,
      sql`select c.conname as name, c.conrelid::regclass::text as table, a.attname as column,
          coalesce((select json_agg(json_build_object('name', i.indexrelid::regclass::text,
              'predicate', pg_get_expr(i.indpred, i.indrelid)))
            from pg_index i
            where i.indrelid = c.conrelid and i.indkey[0] = c.conkey[1]), '[]'::json) as indexes
        from pg_constraint c
          join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
        where c.contype = 'f' and c.confrelid = 'plan_step'::regclass
        order by 2, 3`,
    );
    // Today's: reviews, decisions, artifacts, sources, claims, conditions.
    expect(references.length).toBeGreaterThanOrEqual(6);
    const unserved = references.flatMap((reference) => {
      // A partial index serves the lookup only if it holds every row that may
      // refer: all of them, or all whose column is set.
      const serving = reference.indexes.filter(
        ({ predicate }) =>
          predicate === null ||
          predicate.replace(/[()]/g, "") === `${reference.column} IS NOT NULL`,
      );
      return serving.length > 0
        ? []
        : [`${reference.table}.${reference.column} (${reference.name})`];
    });
    expect(unserved).toEqual([]);
  });
});
