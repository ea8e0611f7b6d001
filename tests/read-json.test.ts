/**
 * `readWhenNeeded` (lib/db/statement.ts, drizzle/0037_read_json.sql): a read
 * embedded in a statement that runs only when its branch is taken, in the
 * embedding statement's snapshot, as the sub-plan it replaces would. The claim
 * reads a completed plan's answer so (lib/services/loop/claim-next-step.ts).
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { DatabaseHandle } from "@/lib/db/client";
import { readWhenNeeded, run, statement } from "@/lib/db/statement";
import { BACKENDS, freshDatabase, postgresWithHolder } from "./support/databases";
import { answerBehindHolder } from "./support/lock-waits";

const probeTables = [
  "create table read_probe (id int primary key)",
  "insert into read_probe values (1)",
  "create table read_probe_log (id serial primary key, note text not null)",
];

/** The log's notes as JSON, over a note to leave out ($1) and a limit ($2). */
const LOG_READ = `select coalesce(json_agg(note order by id), '[]'::json)
  from (select id, note from read_probe_log where note <> $1::text order by id limit $2::int) l`;

const readLog = statement(
  "read the log when asked",
  `select case when $1::boolean then ${readWhenNeeded(LOG_READ, ["$2::text", "$3::int"])} end as notes`,
  z.object({ notes: z.array(z.string()).nullable() }),
);

describe.each(BACKENDS)("a read run only when needed on %s", (backend) => {
  let handle: DatabaseHandle;

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    for (const text of probeTables) await handle.db.execute(sql.raw(text));
    await handle.db.execute(
      sql`insert into read_probe_log (note) values ('first'), (${`a "quoted" 'note' {x}`}), ('third')`,
    );
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("answers the read's JSON with the statement's parameters, cast as the read casts them", async () => {
    expect(await run(handle.db, readLog, [true, "first", 5])).toEqual([
      { notes: [`a "quoted" 'note' {x}`, "third"] },
    ]);
    expect(await run(handle.db, readLog, [true, "nothing", 1])).toEqual([{ notes: ["first"] }]);
  });

  it("runs the read only in the branch that asks for it", async () => {
    const failing = statement(
      "divide by zero when asked",
      `select case when $1::boolean then ${readWhenNeeded("select to_json(1 / $1::int)", ["$2::int"])} end as n`,
      z.object({ n: z.number().nullable() }),
    );
    expect(await run(handle.db, failing, [false, 0])).toEqual([{ n: null }]);
    await expect(run(handle.db, failing, [true, 0])).rejects.toThrow(/division by zero/);
    expect(await run(handle.db, failing, [true, 1])).toEqual([{ n: 1 }]);
  });

  it("keeps a $n inside the read's literals and comments as text", async () => {
    const literal = statement(
      "a read whose literals hold $n",
      `select ${readWhenNeeded(
        "select to_json($1::text || ' costs $2 ' || E'it\\'s $1 ' || $q$ $3 $q$) -- $4\n",
        ["$1::text"],
      )} as text`,
      z.object({ text: z.string() }),
    );
    expect(await run(handle.db, literal, ["this"])).toEqual([
      { text: "this costs $2 it's $1  $3 " },
    ]);
  });
});

describe("a read run only when needed, after a lock, on postgres", () => {
  let db: Awaited<ReturnType<typeof postgresWithHolder>>;

  beforeAll(async () => {
    db = await postgresWithHolder(probeTables);
  });
  afterAll(async () => {
    await db?.close();
  });

  it("reads as the embedding statement's snapshot holds, not what committed while it waited", async () => {
    const behindLock = statement(
      "read the log behind a lock",
      `with locked as materialized (select id from read_probe where id = $1::int for update)
       select case when (select id from locked) = $1::int
         then ${readWhenNeeded(LOG_READ, ["$2::text", "$3::int"])} end as notes`,
      z.object({ notes: z.array(z.string()).nullable() }),
    );
    const answer = answerBehindHolder(
      db.other,
      async (holder) => {
        await holder`select id from read_probe where id = 1 for update`;
        await holder`insert into read_probe_log (note) values ('the holder')`;
      },
      () => run(db.handle.db, behindLock, [1, "", 10]),
      { name: behindLock.name, count: 1 },
    );
    // A read with a snapshot of its own (a volatile function's) would see the
    // holder's row, which the statement's other reads do not.
    expect(await answer).toEqual([{ notes: [] }]);
    expect(await run(db.handle.db, behindLock, [1, "", 10])).toEqual([{ notes: ["the holder"] }]);
  });
});
