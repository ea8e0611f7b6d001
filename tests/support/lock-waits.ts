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

/**
 * `call`'s answer, made while another connection of `sql` holds, in a
 * transaction, what `hold` took: the holder commits once `count` connections
 * wait for a lock in the statement named `name`, so the answer is the one
 * given behind the lock.
 */
export async function answerBehindHolder<T>(
  sql: postgres.Sql,
  hold: (holder: postgres.ReservedSql) => Promise<unknown>,
  call: () => Promise<T>,
  waiting: { name: string; count: number },
): Promise<T> {
  const holder = await sql.reserve();
  let answer: Promise<T>;
  try {
    await holder`begin`;
    await hold(holder);
    answer = call();
    // Awaited below; a rejection meanwhile is not unhandled.
    answer.catch(() => {});
    await waitingForLocks(sql, waiting.name, waiting.count);
  } finally {
    await holder`commit`;
    holder.release();
  }
  return answer;
}
