/**
 * Waiting for a statement to queue on a lock, on PostgreSQL: a test that
 * holds a lock from another connection releases it only once the calls it
 * holds up are seen waiting, so what it asserts is what happens behind a lock.
 */
import type postgres from "postgres";
import { expect } from "vitest";

/** Until `count` connections wait for a lock in the statement named `name` (lib/db/statement.ts). */
export async function waitingForLocks(sql: postgres.Sql, name: string, count: number) {
  const pattern = `/* ${name} */%`;
  await expect
    .poll(
      async () =>
        (
          await sql`select count(*)::int as n from pg_stat_activity
            where wait_event_type = 'Lock' and query like ${pattern}`
        )[0]?.n,
      { timeout: 10_000 },
    )
    .toBe(count);
}
