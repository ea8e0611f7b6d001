/**
 * The deadlines and the closed-connection rule of lib/db/postgres-client.ts on
 * PostgreSQL 15, with the statement timeout shortened so a deadline passes
 * within the test: a server that stops answering fails the call (never a hang),
 * a statement past `statement_timeout` is PostgreSQL's own error, and a
 * transaction whose connection closes fails at once; each time the client goes
 * on working. (Failover and poolers: tests/failover.test.ts, tests/pooler.test.ts.)
 */
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresClient, type PostgresClient } from "@/lib/db/postgres-client";
import { createPostgresDatabase } from "./support/databases";

const STATEMENT_TIMEOUT_MS = 500;
/** The client's deadline: the statement timeout and its 5 s margin, plus one sweep. */
const CLIENT_DEADLINE_MS = STATEMENT_TIMEOUT_MS + 5_000 + 1_000;

describe("the PostgreSQL client's deadlines", () => {
  let url: string;
  let client: PostgresClient;
  let admin: postgres.Sql;

  beforeAll(async () => {
    url = await createPostgresDatabase();
    client = await openPostgresClient({
      url,
      maxConnections: 1,
      preparedStatements: true,
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
    });
    admin = postgres(url, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await client.end();
    await admin.end();
  });

  const backendPid = async (of: PostgresClient = client) => {
    const [row] = (await of.sql.unsafe("select pg_backend_pid() as pid")) as unknown as {
      pid: number;
    }[];
    if (!row) throw new Error("no backend pid");
    return row.pid;
  };
  const answers = async () =>
    expect(await client.sql.unsafe("select 1 as one")).toEqual([{ one: 1 }]);

  it("fails a statement the server never answers after the client's deadline, then goes on", async () => {
    const pid = await backendPid();
    // A backend that is stopped answers nothing: a host lost without a reset.
    process.kill(pid, "SIGSTOP");
    const started = Date.now();
    try {
      const failure = await Promise.resolve(client.sql.unsafe("select 2")).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({
        code: "CONNECT_TIMEOUT",
        message: expect.stringMatching(/did not answer within 5\.5 seconds/),
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS + 5_000);
      expect(Date.now() - started).toBeLessThan(CLIENT_DEADLINE_MS + 2_000);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    await answers();
  }, 20_000);

  it("fails a transaction's statement the server never answers after the client's deadline, then goes on", async () => {
    // One deadline watches the whole transaction (begin, each statement in turn).
    let pid = 0;
    const failure = await client.sql
      .begin(async (sql) => {
        const [row] = (await sql.unsafe("select pg_backend_pid() as pid")) as unknown as {
          pid: number;
        }[];
        pid = row?.pid ?? 0;
        process.kill(pid, "SIGSTOP");
        // Resumed once the client gave up, so the rollback is answered.
        await sql.unsafe("select 2").then(undefined, (error: unknown) => {
          process.kill(pid, "SIGCONT");
          throw error;
        });
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toMatchObject({
      code: "CONNECT_TIMEOUT",
      message: expect.stringMatching(/did not answer within 5\.5 seconds/),
    });
    await answers();
  }, 20_000);

  it("fails a statement past its deadline when the cancel request cannot reach the server either, and the process goes on", async () => {
    // The client in front of a proxy that, once the statement is sent, resets
    // every new connection: postgres.js's cancel request, on a connection of
    // its own, fails, as it does in the outages a deadline is for.
    const target = new URL(url);
    const piped = new Set<Socket>();
    let refusing = false;
    let refused = 0;
    const proxy = createServer((socket) => {
      if (refusing) {
        refused += 1;
        socket.resetAndDestroy();
        return;
      }
      const upstream = connect(Number(target.port), target.hostname);
      for (const end of [socket, upstream]) {
        piped.add(end);
        end.on("error", () => {});
      }
      socket.pipe(upstream).pipe(socket);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const proxied = new URL(url);
    proxied.hostname = "127.0.0.1";
    proxied.port = String((proxy.address() as AddressInfo).port);
    const viaProxy = await openPostgresClient({
      url: proxied.toString(),
      maxConnections: 1,
      preparedStatements: true,
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    let pid = 0;
    try {
      pid = await backendPid(viaProxy);
      refusing = true;
      process.kill(pid, "SIGSTOP");
      const failure = await Promise.resolve(viaProxy.sql.unsafe("select 2")).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: "CONNECT_TIMEOUT" });
      // The cancel request was sent, and its reset connection has failed by
      // now, observed rather than left unhandled.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(refused).toBe(1);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      if (pid) process.kill(pid, "SIGCONT");
      proxy.close();
      for (const socket of piped) socket.destroy();
      await viaProxy.end();
    }
    await answers();
  }, 20_000);

  it("ends a statement in a transaction at statement_timeout with PostgreSQL's error", async () => {
    const failure = await client.sql
      .begin(async (sql) => sql.unsafe("select pg_sleep(3)"))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toMatchObject({ code: "57014" });
    await answers();
  });

  it("fails a transaction whose connection closes at once, and keeps none of it", async () => {
    await client.sql.unsafe("create table if not exists kept (n int)");
    const started = Date.now();
    const failure = await client.sql
      .begin(async (sql) => {
        await sql.unsafe("insert into kept values (1)");
        const [row] = (await sql.unsafe("select pg_backend_pid() as pid")) as unknown as {
          pid: number;
        }[];
        await admin`select pg_terminate_backend(${row?.pid ?? 0})`;
        await sql.unsafe("insert into kept values (2)");
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toMatchObject({ code: expect.stringMatching(/^(CONNECTION_CLOSED|57P01)$/) });
    expect(Date.now() - started).toBeLessThan(5_000);
    await answers();
    expect(await admin`select count(*)::int as n from kept`).toEqual([{ n: 0 }]);
  });
});
