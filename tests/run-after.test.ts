/**
 * `statementAfter` / `runAfter` (lib/db/statement.ts, drizzle/0035_run_after.sql):
 * two statements in one call, the second reading what committed before it
 * started, so what a lock the first waited for protected. The submit behind a
 * plan's lock relies on it (lib/services/loop/complete-step-guarded.ts).
 */
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { runAfter, statement, statementAfter } from "@/lib/db/statement";
import { BACKENDS, createPostgresDatabase, freshDatabase } from "./support/databases";
import { waitingForLocks } from "./support/lock-waits";

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

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    for (const text of probeTables) await handle.db.execute(sql.raw(text));
  });
  afterAll(async () => {
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
    const before = await handle.db.execute(sql`select count(*)::int as n from after_probe_log`);
    await expect(runAfter(handle.db, failing, [1], ["lost"])).rejects.toThrow(/division by zero/);
    const after = await handle.db.execute(sql`select count(*)::int as n from after_probe_log`);
    expect(after).toEqual(before);
  });

  it("refuses, when it is built, a statement with more parameters than the call carries", () => {
    const wide = statement(
      "twenty-five parameters",
      `select ${Array.from({ length: 25 }, (_, i) => `$${i + 1}::text`).join(" || ")} as joined`,
      z.object({ joined: z.string() }),
    );
    expect(() => statementAfter(lockProbe, wide)).toThrow(
      /"twenty-five parameters" cannot run after/,
    );
    expect(() => runAfter(handle.db, echo, [1], [{ not: "text" }])).toThrow(
      /JSON text or a scalar/,
    );
  });
});

describe("a statement run after a lock on postgres", () => {
  let handle: DatabaseHandle;
  let other: postgres.Sql;

  beforeAll(async () => {
    const url = await createPostgresDatabase();
    handle = await openDatabase({ kind: "postgres", url });
    await handle.migrate();
    other = postgres(url, { max: 2, onnotice: () => {} });
    for (const text of probeTables) await other.unsafe(text);
  });
  afterAll(async () => {
    await other?.end();
    await handle?.close();
  });

  it("reads what the lock's holder wrote before it let go", async () => {
    const holder = await other.reserve();
    let answer: Promise<unknown[]> | undefined;
    try {
      await holder`begin`;
      await holder`select id from after_probe where id = 1 for update`;
      await holder`insert into after_probe_log (note) values ('the holder')`;
      answer = runAfter(
        handle.db,
        echo,
        [1],
        ["behind", null, 1, false, "2026-12-01T00:00:00Z", '{"say":"x"}'],
      );
      answer.catch(() => {});
      await waitingForLocks(other, echo.name, 1);
    } finally {
      await holder`commit`;
      holder.release();
    }
    // The holder's row; a statement that started before the holder's commit
    // would count none (its own insert is not visible to its other reads).
    expect(await answer).toEqual([expect.objectContaining({ note: "behind", committedBefore: 1 })]);
  });
});
