/**
 * A row's referrers are found through an index. Deleting a row makes
 * PostgreSQL act on every row that refers to it (a cascade or a set null), by
 * a lookup on the referring column; without an index leading with that column
 * the lookup is a scan of the whole table, every team's rows, once per row
 * deleted. Requests delete rows in number: modify_plan's remove_step and
 * revert_revision delete steps (reviews, decisions, artifacts, sources and
 * claims refer to them); an admin deleting a teammate deletes the person,
 * their keys and connected apps (every call in the tool-call log names one);
 * the scheduler deletes unused OAuth clients (docs/performance.md, "A step's
 * rows found by index" and "Every key's referrers found by index").
 *
 * The rule, not a list: every foreign key, today's and any added later, on
 * PGlite and PostgreSQL 15, but a team's own (`tenant_id`): a team's rows go
 * only with the whole team, which reads every table of it anyway, and an
 * index by team on the loop's tables would cost every step.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { BACKENDS, freshDatabase } from "./support/databases";
import { readRows } from "./support/rows";

describe.each(BACKENDS)("the rows that refer to another on %s", (backend) => {
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
        where c.contype = 'f'
          and not (a.attname = 'tenant_id' and c.confrelid = 'tenant'::regclass)
        order by 2, 3`,
    );
    // Today's: a step's six referrers, a plan's, a review's, a user's, a key's...
    expect(references.length).toBeGreaterThanOrEqual(40);
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
