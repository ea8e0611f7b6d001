/**
 * `statementAfter` / `runAfter` (lib/db/statement.ts, drizzle/0035_run_after.sql):
 * two statements in one call, the second reading what committed before it
 * started, so what a lock the first waited for protected. The submit behind a
 * plan's lock relies on it (lib/services/loop/complete-step-guarded.ts).
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { runAfter, statement, statementAfter } from "@/lib/db/statement";
import {
  BACKENDS,
  createPostgresDatabase,
  freshDatabase,
  postgresWithHolder,
} from "./support/databases";
import { answerBehindHolder } from "./support/lock-waits";
import { readRows } from "./support/rows";

const lockProbe = statement(
  "lock a probe",
  "select id from after_probe where id = $1::int for update",
  z.object({ id: z.number() }),
);

const echo = statementAfter(
  lockProbe,
  statement(
    "echo the parameters",
    `with written as (
       insert into after_probe_log (note) values ($1::text) returning note
     )
     select (select note from written) as note, $2::text as "nothing", $3::float8 as confidence,
       $4::boolean as flag, $5::timestamptz = '2026-12-01T00:00:00Z'::timestamptz as "sameTime",
       ($6::jsonb) ->> 'say' as said,
       (select count(*)::int from after_probe_log) as "committedBefore"`,
    z.object({
      note: z.string(),
      nothing: z.null(),
      confidence: z.number(),
      flag: z.boolean(),
      sameTime: z.boolean(),
      said: z.string(),
      committedBefore: z.number(),
    }),
  ),
);

const probeTables = [
  "create table after_probe (id int primary key)",
  "insert into after_probe values (1)",
  "create table after_probe_log (id serial primary key, note text not null)",
];

describe.each(BACKENDS)("statements run one after another in one call on %s", (backend) => {
  let handle: DatabaseHandle;
  /** A handle on one connection, so the session checked is the one the calls ran in. */
  let single: DatabaseHandle;

  beforeAll(async () => {
    if (backend === "pglite") {
      handle = await freshDatabase(backend);
      single = handle;
    } else {
      const url = await createPostgresDatabase();
      handle = await openDatabase({ kind: "postgres", url });
      await handle.migrate();
      single = await openDatabase({ kind: "postgres", url, maxConnections: 1 });
    }
    for (const text of probeTables) await handle.db.execute(sql.raw(text));
  });
  afterAll(async () => {
    if (single !== handle) await single?.close();
    await handle?.close();
  });

  it("passes every kind of parameter as the statement casts it, and parses its row", async () => {
    const note = `a "quoted", {braced} back\\slash 'note' NULL`;
    const rows = await runAfter(
      handle.db,
      echo,
      [1],
      [note, null, 0.85, true, new Date("2026-12-01T00:00:00Z"), JSON.stringify({ say: "hi" })],
    );
    expect(rows).toEqual([
      {
        note,
        nothing: null,
        confidence: 0.85,
        flag: true,
        sameTime: true,
        said: "hi",
        committedBefore: 0,
      },
    ]);
  });

  it("writes nothing when the second statement fails: the two are one statement", async () => {
    const failing = statementAfter(
      lockProbe,
      statement(
        "write, then divide by zero",
        `with written as (insert into after_probe_log (note) values ($1::text) returning id)
         select (select id from written) / 0 as id`,
        z.object({ id: z.number() }),
      ),
    );
    const count = sql`select count(*)::int as n from after_probe_log`;
    const before = await readRows(handle.db, count);
    await expect(runAfter(handle.db, failing, [1], ["lost"])).rejects.toThrow(/division by zero/);
    const after = await readRows(handle.db, count);
    expect(after).toEqual(before);
  });

  it("refuses a call with the wrong number of parameters, or one it cannot send as text", async () => {
    await expect(runAfter(handle.db, echo, [1], ["one"])).rejects.toThrow(
      /takes 1 and 6 parameters; it was given 1 and 1/,
    );
    await expect(runAfter(handle.db, echo, [1], [{ not: "text" }, 2, 3, 4, 5, 6])).rejects.toThrow(
      /JSON text, a scalar or null/,
    );
    await expect(runAfter(handle.db, echo, [1], [undefined, 2, 3, 4, 5, 6])).rejects.toThrow(
      /JSON text, a scalar or null/,
    );
    expect(() =>
      statementAfter(
        lockProbe,
        statement("quoted", "select $after$x$after$ as x", z.object({ x: z.string() })),
      ),
    ).toThrow(/"quoted" holds \$after\$/);
  });

  it("keeps both statements prepared in the session, no value in their text, and prepares them again when they are gone", async () => {
    const secret = "a value that must not be part of a statement's text";
    const params = [secret, null, 1, true, "2026-12-01T00:00:00Z", '{"say":"again"}'];
    const prepared = sql`select count(*)::int as n,
        count(*) filter (where statement like ${`%${secret}%`})::int as "withTheValue"
      from pg_prepared_statements where name like 'run\_after\_%'
        and (statement like '%/* lock a probe */%' or statement like '%/* echo the parameters */%')`;
    await runAfter(single.db, echo, [1], params);
    expect(await readRows(single.db, prepared)).toEqual([{ n: 2, withTheValue: 0 }]);
    await single.db.execute(sql`do $$ declare gone text; begin
      for gone in select name from pg_prepared_statements where name like 'run\_after\_%' loop
        execute format('deallocate %I', gone);
      end loop; end $$`);
    expect(await readRows(single.db, prepared)).toEqual([{ n: 0, withTheValue: 0 }]);
    expect(await runAfter(single.db, echo, [1], params)).toEqual([
      expect.objectContaining({ note: secret, said: "again" }),
    ]);
    expect(await readRows(single.db, prepared)).toEqual([{ n: 2, withTheValue: 0 }]);
  });
});

describe("a statement run after a lock on postgres", () => {
  let db: Awaited<ReturnType<typeof postgresWithHolder>>;

  beforeAll(async () => {
    db = await postgresWithHolder(probeTables);
  });
  afterAll(async () => {
    await db?.close();
  });

  it("reads what the lock's holder wrote before it let go", async () => {
    const answer = answerBehindHolder(
      db.other,
      async (holder) => {
        await holder`select id from after_probe where id = 1 for update`;
        await holder`insert into after_probe_log (note) values ('the holder')`;
      },
      () =>
        runAfter(
          db.handle.db,
          echo,
          [1],
          ["behind", null, 1, false, "2026-12-01T00:00:00Z", '{"say":"x"}'],
        ),
      { name: echo.name, count: 1 },
    );
    // The holder's row; a statement that started before the holder's commit
    // would count none (its own insert is not visible to its other reads).
    expect(await answer).toEqual([expect.objectContaining({ note: "behind", committedBefore: 1 })]);
  });
});
