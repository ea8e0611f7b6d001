/**
 * What the audit chain's trigger (`plan_audit_chain`, docs/audit.md) costs per
 * row: one plan's trail grows by N rows inserted one statement at a time inside
 * the database (no round trips), each in its own transaction as Cairn writes
 * them, then IN_ONE rows in one transaction (a bulk import), with the trigger
 * and without it, on PostgreSQL 15 and on PGlite. It counts the database's
 * CPU time, not wall time, so a busy shared machine skews it less; the
 * difference per row is the trigger's cost.
 * Run: `npx tsx --tsconfig tsconfig.tsx.json bench/audit-trigger.ts [N] [IN_ONE]`.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { z } from "zod";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { selectRows } from "@/lib/db/rows";
import { startPostgres } from "@/tests/support/postgres-server";

const ROWS = Number(process.argv[2] ?? 5000);
const IN_ONE = Number(process.argv[3] ?? 1000);
const ROUNDS = 5;

type Mode = { rows: number; each: boolean; label: string };
const MODES: Mode[] = [
  { rows: ROWS, each: true, label: "one row per transaction" },
  { rows: IN_ONE, each: false, label: "all in one transaction" },
];

/** CPU microseconds per row to insert a new plan's trail of `mode.rows` rows, the trigger on or off. */
async function perRow(handle: DatabaseHandle, tenantId: string, mode: Mode, chained: boolean) {
  const planId = randomUUID();
  await handle.db.execute(
    sql`insert into research_plan (id, tenant_id, name, research_question)
      values (${planId}::uuid, ${tenantId}::uuid, 'bench', 'q')`,
  );
  await handle.db.execute(
    sql.raw(
      `alter table plan_audit_log ${chained ? "enable" : "disable"} trigger plan_audit_chain`,
    ),
  );
  const before = await cpuMicros(handle);
  // CALL from the top level, so the procedure may commit.
  await handle.db.execute(
    sql.raw(`call bench_audit_rows('${planId}', '${tenantId}', ${mode.rows}, ${mode.each})`),
  );
  return ((await cpuMicros(handle)) - before) / mode.rows;
}

/**
 * The CPU time spent so far by the database: the server's backend process
 * (its one connection), or this process, where PGlite runs. CPU time, not
 * wall time, so other work on a shared machine does not count.
 */
async function cpuMicros(handle: DatabaseHandle): Promise<number> {
  if (handle.kind === "pglite") {
    const { user, system } = process.cpuUsage();
    return user + system;
  }
  const [backend] = await selectRows(
    handle.db,
    z.object({ pid: z.number() }),
    sql`select pg_backend_pid() as pid`,
  );
  // Fields 14 and 15 of /proc/<pid>/stat: user and system time, in ticks of 10 ms.
  const fields =
    readFileSync(`/proc/${backend?.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

async function measure(name: string, handle: DatabaseHandle) {
  await handle.migrate();
  // One row per transaction, as Cairn's writers make them (commits not flushed:
  // the flush is the same with the trigger or without it); or every row in one.
  await handle.db.execute(sql`
    create or replace procedure bench_audit_rows(p uuid, t uuid, n int, each boolean,
      inout us double precision default null)
    language plpgsql as $$
    begin
      perform set_config('synchronous_commit', 'off', false);
      for i in 1..n loop
        -- A place and a digest of its own, which the trigger overwrites, so
        -- that a row written with the trigger off passes plan_audit_log_chained.
        insert into plan_audit_log (tenant_id, plan_id, event_type, actor_type, actor_label,
          payload, chain_index, digest)
        values (t, p, 'step_completed', 'system', 'bench', jsonb_build_object('i', i), i, '');
        if each then
          commit;
        end if;
      end loop;
    end $$`);
  const [tenant] = await selectRows(
    handle.db,
    z.object({ id: z.string() }),
    sql`insert into tenant (name) values (${`bench-${randomUUID()}`}) returning id`,
  );
  const tenantId = tenant?.id ?? "";
  const best = (values: number[]) => Math.min(...values);
  for (const mode of MODES) {
    const on: number[] = [];
    const off: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      off.push(await perRow(handle, tenantId, mode, false));
      on.push(await perRow(handle, tenantId, mode, true));
    }
    console.log(
      `${name}, ${mode.rows} rows ${mode.label}, best of ${ROUNDS}: ${best(on).toFixed(1)} µs of CPU per audit row, ${best(off).toFixed(1)} µs without the trigger: the trigger ${(best(on) - best(off)).toFixed(1)} µs`,
    );
  }
  await handle.db.execute(sql`alter table plan_audit_log enable trigger plan_audit_chain`);
}

async function main() {
  const pg = await startPostgres();
  try {
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    await admin.unsafe("create database bench_audit");
    await admin.end();
    const server = await openDatabase({
      kind: "postgres",
      url: pg.url.replace(/\/[^/]*$/, "/bench_audit"),
      maxConnections: 1,
    });
    try {
      await measure("PostgreSQL 15", server);
    } finally {
      await server.close();
    }
  } finally {
    await pg.stop();
  }
  const embedded = await openDatabase({ kind: "pglite" });
  try {
    await measure("PGlite", embedded);
  } finally {
    await embedded.close();
  }
}

await main();
