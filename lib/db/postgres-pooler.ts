/**
 * Whether the database URL points at a transaction pooler, which cannot carry
 * the named prepared statements the PostgreSQL client sends (postgres-client.ts).
 */
import "server-only";
import postgres from "postgres";
import { CONNECT_TIMEOUT_SECONDS, reserveWithin } from "./postgres-deadlines";

export const POOLER_ADVICE =
  "DATABASE_URL points at a transaction pooler (PgBouncer in transaction mode, Supavisor, RDS Proxy…), which cannot carry named prepared statements. Set CAIRN_PREPARED_STATEMENTS=off. This process now sends every statement unprepared.";

/**
 * Whether two sessions of Cairn's share one server connection, one after the
 * other: only a pooler in transaction (or statement) mode does that, directly
 * or in session mode every session has a server process of its own. PgBouncer
 * hands the server connection freed last to the next client, so the second
 * session gets the first one's. A pooler that hands out another is caught at
 * the first statement it loses (see `observe`). Unknown (false) when the
 * database cannot be reached now: calls will say so.
 */
export async function behindTransactionPooler(url: string): Promise<boolean> {
  const probe = postgres(url, {
    max: 2,
    prepare: false,
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    onnotice: () => {},
  });
  try {
    // Within the connect timeout: a database without a primary now must not hold up the start.
    const within = CONNECT_TIMEOUT_SECONDS * 1000;
    const first = await reserveWithin(probe.reserve(), within);
    const second = await reserveWithin(probe.reserve(), within);
    const pid = async (session: postgres.ReservedSql) =>
      (await session.unsafe<{ pid: number }[]>("select pg_backend_pid() as pid"))[0]?.pid;
    const [a, b] = [await pid(first), await pid(second)];
    first.release();
    second.release();
    return a === b;
  } catch {
    return false;
  } finally {
    await probe.end({ timeout: 1 });
  }
}
