/**
 * The loop's statements run as named prepared statements whose plans are
 * reused, on both databases (lib/db/client.ts), and on PGlite the prepared
 * route (lib/db/pglite-prepared.ts) answers exactly as PGlite's own `query`.
 */
import { PGlite, protocol, type QueryOptions, type Results } from "@electric-sql/pglite";
import { eq, sql } from "drizzle-orm";
import { boolean, integer, jsonb, numeric, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { MAX_STATEMENTS, preparingPglite } from "@/lib/db/pglite-prepared";
import { MAX_NAMED_STATEMENTS } from "@/lib/db/postgres-client";
import { tenants } from "@/lib/db/schema";
import { BACKENDS, createPostgresDatabase, freshDatabase } from "./support/databases";
import { readRows } from "./support/rows";

const RUNS = 8;

describe.each(BACKENDS)("prepared statements on %s", (backend) => {
  let handle: DatabaseHandle;
  let tenantId: string;

  beforeAll(async () => {
    // One connection, so the check below sees the statements the calls prepared.
    handle =
      backend === "pglite"
        ? await freshDatabase("pglite")
        : await openDatabase({
            kind: "postgres",
            url: await createPostgresDatabase(),
            maxConnections: 1,
          });
    if (backend === "postgres") await handle.migrate();
    const [tenant] = await handle.db.insert(tenants).values({ name: "Acme" }).returning();
    if (!tenant) throw new Error("no tenant");
    tenantId = tenant.id;
  });
  afterAll(async () => {
    await handle.close();
  });

  const prepared = (statement: string) =>
    readRows<{ name: string; generic_plans: number; custom_plans: number }>(
      handle.db,
      sql`select name, generic_plans::int, custom_plans::int from pg_prepared_statements where statement = ${statement}`,
    );

  it("parses a repeated drizzle query once and reuses its plan", async () => {
    const query = () =>
      handle.db.select({ name: tenants.name }).from(tenants).where(eq(tenants.id, tenantId));
    for (let i = 0; i < RUNS; i++) expect(await query()).toEqual([{ name: "Acme" }]);
    const [statement, ...others] = await prepared(query().toSQL().sql);
    expect(others).toEqual([]);
    expect(statement?.name).not.toBe("");
    expect(statement?.generic_plans).toBeGreaterThan(0);
    expect((statement?.generic_plans ?? 0) + (statement?.custom_plans ?? 0)).toBe(RUNS);
  });

  it("parses a repeated db.execute(sql…) once and reuses its plan", async () => {
    for (let i = 0; i < RUNS; i++) {
      const rows = await readRows<{ name: string }>(
        handle.db,
        sql`select name from tenant where id = ${tenantId} and name <> ${`not ${i}`}`,
      );
      expect(rows).toEqual([{ name: "Acme" }]);
    }
    const [statement, ...others] = await prepared(
      "select name from tenant where id = $1 and name <> $2",
    );
    expect(others).toEqual([]);
    expect(statement?.generic_plans).toBeGreaterThan(0);
  });

  it("names at most MAX_STATEMENTS distinct statements on a connection, and runs the rest unnamed", async () => {
    for (let i = 0; i <= MAX_STATEMENTS + 20; i++) {
      const [row] = await readRows<{ n: number }>(
        handle.db,
        sql`select ${1}::int + ${sql.raw(String(i))} as n`,
      );
      expect(row?.n).toBe(1 + i);
    }
    const [held] = await readRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from pg_prepared_statements`,
    );
    expect(held?.n).toBeLessThanOrEqual(MAX_STATEMENTS);
    expect(MAX_NAMED_STATEMENTS).toBe(MAX_STATEMENTS);
  });

  it("answers errors as before and keeps working, in and out of transactions", async () => {
    const duplicate = () => handle.db.insert(tenants).values({ id: tenantId, name: "Dup" });
    const byId = () =>
      handle.db.select({ n: tenants.name }).from(tenants).where(eq(tenants.id, tenantId));
    for (let i = 0; i < 3; i++) {
      await expect(duplicate()).rejects.toMatchObject({ cause: { code: "23505" } });
      expect(await byId()).toEqual([{ n: "Acme" }]);
    }
    await expect(
      handle.db.execute(sql`select name frm tenant where id = ${tenantId}`),
    ).rejects.toMatchObject({ cause: { code: "42601" } });
    await expect(
      handle.db.transaction(async (tx) => {
        await tx.update(tenants).set({ name: "Renamed" }).where(eq(tenants.id, tenantId));
        await tx.insert(tenants).values({ id: tenantId, name: "Dup" });
      }),
    ).rejects.toMatchObject({ cause: { code: "23505" } });
    await expect(
      handle.db.transaction(async (tx) => {
        await tx.update(tenants).set({ name: "Renamed" }).where(eq(tenants.id, tenantId));
        // A failed savepoint leaves the transaction usable.
        await expect(
          tx.transaction((inner) => inner.insert(tenants).values({ id: tenantId, name: "Dup" })),
        ).rejects.toMatchObject({ cause: { code: "23505" } });
        expect(await tx.select({ n: tenants.name }).from(tenants)).toEqual([{ n: "Renamed" }]);
        tx.rollback();
      }),
    ).rejects.toThrow("Rollback");
    expect(await byId()).toEqual([{ n: "Acme" }]);
  });

  it("prepares again when a schema change or DEALLOCATE ALL drops a statement", async () => {
    await handle.db.execute(sql`create table prepared_probe (id int primary key)`);
    await handle.db.execute(sql`insert into prepared_probe values (1)`);
    const probe = () =>
      readRows<Record<string, unknown>>(
        handle.db,
        sql`select * from prepared_probe where id = ${1}`,
      );
    for (let i = 0; i < RUNS; i++) expect(await probe()).toEqual([{ id: 1 }]);
    await handle.db.execute(sql`alter table prepared_probe add column extra int`);
    expect(await probe()).toEqual([{ id: 1, extra: null }]);
    await handle.db.execute(sql`deallocate all`);
    expect(await probe()).toEqual([{ id: 1, extra: null }]);
    expect(await prepared("select * from prepared_probe where id = $1")).toHaveLength(1);
  });
});

const probes = pgTable("probe", {
  id: integer("id").primaryKey(),
  at: timestamp("at", { withTimezone: true }),
  doc: jsonb("doc"),
  done: boolean("done"),
  note: text("note"),
  tags: text("tags").array(),
  amount: numeric("amount"),
});

describe("PGlite's prepared route against its own query", () => {
  let client: PGlite;
  let plain: PGlite;
  let preparing: PGlite;

  beforeAll(async () => {
    client = await PGlite.create();
    plain = client;
    preparing = preparingPglite(client);
    await client.exec(`create table probe (
      id int primary key, at timestamptz, doc jsonb, done boolean, note text, tags text[], amount numeric
    ); insert into probe (id) values (0)`);
  });
  afterAll(async () => {
    await client.close();
  });

  /** Both routes' outcome, a result or PGlite's error with its fields. */
  async function outcome(
    db: PGlite,
    text: string,
    params: unknown[],
    options?: QueryOptions,
  ): Promise<Results | Record<string, unknown>> {
    try {
      return await db.query(text, params, options);
    } catch (error) {
      const fromPostgres = error instanceof protocol.messages.DatabaseError;
      return { ...(error as object), fromPostgres, message: String(error) };
    }
  }

  const row = [
    new Date("2024-03-01T12:34:56.789Z"),
    { nested: { list: [1, "two", null] } },
    true,
    null,
    ["a", "b c", 'd"e'],
    "12345678901234567890.0123",
  ];
  const drizzleArrayMode: QueryOptions = {
    rowMode: "array",
    parsers: { 1184: (value: string) => value, 1114: (value: string) => value },
  };

  it("returns the same rows, fields and counts for each type and row mode", async () => {
    const insert = "insert into probe values ($1, $2, $3, $4, $5, $6, $7) returning *";
    for (let id = 1; id <= RUNS; id++) {
      const params = [id, ...row];
      const before = await outcome(plain, insert, [id + 100, ...row]);
      const after = await outcome(preparing, insert, params);
      expect({ ...after, rows: [] }).toEqual({ ...before, rows: [] });
      expect((after as Results<{ id: number }>).rows).toEqual(
        (before as Results<{ id: number }>).rows.map((r) => ({ ...r, id })),
      );
    }
    const select = "select *, $2::int[] as ints, $3::text as absent from probe where id <= $1";
    for (let i = 0; i < RUNS; i++) {
      for (const options of [undefined, drizzleArrayMode]) {
        const params = [RUNS, [1, null, 3], null];
        expect(await outcome(preparing, select, params, options)).toEqual(
          await outcome(plain, select, params, options),
        );
      }
    }
    const update = "update probe set done = $1 where id > $2";
    expect(await outcome(preparing, update, [false, 104])).toEqual(
      await outcome(plain, update, [true, 104]),
    );
  });

  it("gives drizzle the same values", async () => {
    const viaPlain = drizzle({ client: plain });
    const viaPreparing = drizzle({ client: preparing });
    await viaPreparing.insert(probes).values({
      id: 1000,
      at: new Date("2025-01-02T03:04:05.006Z"),
      doc: { a: [1, { b: null }] },
      done: false,
      note: null,
      tags: ["x", "y"],
      amount: "0.10",
    });
    for (let i = 0; i < RUNS; i++) {
      const query = (db: typeof viaPlain) => db.select().from(probes).where(eq(probes.id, 1000));
      expect(await query(viaPreparing)).toEqual(await query(viaPlain));
      const raw = sql`select * from probe where id = ${1000} and done = ${false}`;
      expect(await viaPreparing.execute(raw)).toEqual(await viaPlain.execute(raw));
    }
  });

  it("fails as PGlite fails and recovers, in and out of transactions", async () => {
    const failures: [string, unknown[]][] = [
      ["insert into probe (id) values ($1)", [0]], // unique violation, at Execute
      ["select * frm probe where id = $1", [1]], // syntax error, at Parse
      ["select * from probe where id = $1", ["not a number"]], // bad input, at Bind
    ];
    for (const [text, params] of failures) {
      for (let i = 0; i < 3; i++) {
        const after = await outcome(preparing, text, params);
        expect(after).toEqual(await outcome(plain, text, params));
        expect(after).toHaveProperty("fromPostgres", true);
        expect((await preparing.query("select $1::int as ok", [1])).rows).toEqual([{ ok: 1 }]);
      }
    }
    const [duplicate = ["", []]] = failures;
    const inTransaction = async (db: PGlite) => {
      try {
        return await db.transaction(async (tx) => {
          await tx.query("update probe set note = $1 where id = $2", ["changed", 0]);
          return await tx.query(...duplicate);
        });
      } catch (error) {
        return { ...(error as object), message: String(error) };
      }
    };
    expect(await inTransaction(preparing)).toEqual(await inTransaction(plain));
    await preparing.transaction(async (tx) => {
      await tx.query("update probe set note = $1 where id = $2", ["changed", 0]);
      await tx.rollback();
      await expect(tx.query("select $1::int", [1])).rejects.toThrow("Transaction is closed");
    });
    expect((await preparing.query("select note from probe where id = $1", [0])).rows).toEqual([
      { note: null },
    ]);
  });

  it("after DEALLOCATE ALL fails once inside a transaction, then prepares again", async () => {
    const read = "select id from probe where id = $1";
    expect((await preparing.query(read, [0])).rows).toEqual([{ id: 0 }]);
    await client.exec("deallocate all");
    await expect(preparing.transaction((tx) => tx.query(read, [0]))).rejects.toMatchObject({
      code: "26000",
    });
    expect((await preparing.transaction((tx) => tx.query(read, [0]))).rows).toEqual([{ id: 0 }]);
  });

  it("keeps at most MAX_STATEMENTS statements, closing the least recently used", async () => {
    const count = "select count(*)::int as n from pg_prepared_statements where $1";
    for (let i = 0; i <= MAX_STATEMENTS; i++) await preparing.query(`select $1::int + ${i}`, [1]);
    const [{ n = 0 } = {}] = (await preparing.query<{ n: number }>(count, [true])).rows;
    expect(n).toBe(MAX_STATEMENTS);
    // The first of them, closed since, is prepared again.
    expect((await preparing.query("select $1::int + 0", [1])).rows).toEqual([{ "?column?": 1 }]);
  });

  it("does not interleave a statement with another caller's open transaction", async () => {
    const order: string[] = [];
    let opened: () => void = () => {};
    const isOpen = new Promise<void>((resolve) => {
      opened = resolve;
    });
    const transaction = preparing.transaction(async (tx) => {
      await tx.query("update probe set note = $1 where id = $2", ["held", 0]);
      opened();
      await new Promise((resolve) => setTimeout(resolve, 50));
      order.push("transaction done");
      await tx.query("update probe set note = $1 where id = $2", [null, 0]);
    });
    await isOpen;
    const read = preparing
      .query<{ note: string | null }>("select note from probe where id = $1", [0])
      .then((result) => {
        order.push("read");
        return result;
      });
    const [, result] = await Promise.all([transaction, read]);
    expect(order).toEqual(["transaction done", "read"]);
    expect(result.rows).toEqual([{ note: null }]);
  });
});
