/**
 * Section 1, the floor: what PostgreSQL itself allows on this machine, through
 * postgres.js with one connection per client. `SELECT 1` is a bare round trip;
 * the one-row UPDATE is a single auto-committed statement, so each one is a
 * transaction that waits for its WAL flush (fsync is on), the least any write
 * call of Cairn's has to pay.
 */
import postgres from "postgres";
import { closedLoop, type LatencySummary, round, summarise } from "./support/stats";

export type FloorRun = {
  clients: number;
  selectPerSecond: number;
  select: LatencySummary;
  updatePerSecond: number;
  update: LatencySummary;
};

const WARM_UP_MS = 500;

export async function runFloor(
  url: string,
  levels: readonly number[],
  durationMs: number,
): Promise<FloorRun[]> {
  const max = Math.max(...levels);
  const sql = postgres(url, { max, onnotice: () => {} });
  try {
    await sql`create table if not exists bench_floor (id int primary key, n bigint not null)`;
    await sql`insert into bench_floor select g, 0 from generate_series(0, ${max - 1}) g on conflict do nothing`;
    const runs: FloorRun[] = [];
    for (const clients of levels) {
      // Each client updates its own row: the floor is the commit path, not lock waits.
      const select = () => sql`select 1`.then(() => undefined);
      const update = (client: number) =>
        sql`update bench_floor set n = n + 1 where id = ${client}`.then(() => undefined);
      await closedLoop(clients, WARM_UP_MS, select);
      const selects = await closedLoop(clients, durationMs, select);
      await closedLoop(clients, WARM_UP_MS, update);
      const updates = await closedLoop(clients, durationMs, update);
      runs.push({
        clients,
        selectPerSecond: round((selects.samples.length / selects.elapsedMs) * 1000, 1),
        select: summarise(selects.samples),
        updatePerSecond: round((updates.samples.length / updates.elapsedMs) * 1000, 1),
        update: summarise(updates.samples),
      });
    }
    return runs;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
