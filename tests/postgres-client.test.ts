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
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { createPostgresDatabase } from "./support/databases";

const STATEMENT_TIMEOUT_MS = 500;
/** The client's deadline: the statement timeout and its 5 s margin, plus one sweep. */
const CLIENT_DEADLINE_MS = STATEMENT_TIMEOUT_MS + 5_000 + 1_000;

/** An ErrorResponse as PostgreSQL sends it for a cancelled statement. */
function cancelledStatement(): Buffer {
  const fields = Buffer.from(
    "SERROR\0VERROR\0C57014\0Mcanceling statement due to user request\0\0",
  );
  const header = Buffer.alloc(5);
  header[0] = 0x45;
  header.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([header, fields]);
}

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
  /**
   * A client of its own, on one connection, whose connections go through a
   * proxy: `relay` joins each to its own connection to the server, unless
   * `refuse` says to reset it.
   */
  const throughProxy = async (
    relay: (socket: Socket, upstream: Socket) => void,
    refuse: () => boolean = () => false,
  ) => {
    const target = new URL(url);
    const piped = new Set<Socket>();
    const proxy = createServer((socket) => {
      if (refuse()) {
        socket.resetAndDestroy();
        return;
      }
      const upstream = connect(Number(target.port), target.hostname);
      for (const end of [socket, upstream]) {
        piped.add(end);
        end.on("error", () => {});
      }
      relay(socket, upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const proxied = new URL(url);
    proxied.hostname = "127.0.0.1";
    proxied.port = String((proxy.address() as AddressInfo).port);
    const client = await openPostgresClient({
      url: proxied.toString(),
      maxConnections: 1,
      preparedStatements: true,
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
    });
    const close = async () => {
      proxy.close();
      for (const socket of piped) socket.destroy();
      await client.end();
    };
    return { client, close };
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
    let refusing = false;
    let refused = 0;
    const { client: viaProxy, close } = await throughProxy(
      (socket, upstream) => socket.pipe(upstream).pipe(socket),
      () => {
        if (refusing) refused += 1;
        return refusing;
      },
    );
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
      await close();
    }
    await answers();
  }, 20_000);

  it("keeps a failed transaction's own error when the server refuses its rollback, and sends the rollback once more", async () => {
    // A deadline's cancel that reaches the server late lands on whatever runs
    // then, the rollback after a failed body among them. A proxy answers the
    // first ROLLBACK as that cancel would: PostgreSQL's 57014 in place of its
    // CommandComplete (the server itself rolled back, so the connection's
    // state afterwards says nothing here: what is tested is the client's
    // answer and its second rollback).
    let rollbacks = 0;
    const { client: viaProxy, close } = await throughProxy((socket, upstream) => {
      socket.pipe(upstream);
      let pending = Buffer.alloc(0);
      upstream.on("data", (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        // Server messages: a type byte, then a length that counts itself.
        while (pending.length >= 5 && pending.length >= 1 + pending.readInt32BE(1)) {
          const size = 1 + pending.readInt32BE(1);
          const message = pending.subarray(0, size);
          pending = pending.subarray(size);
          const isRollback = message[0] === 0x43 && message.subarray(5).toString() === "ROLLBACK\0";
          if (isRollback) rollbacks += 1;
          socket.write(isRollback && rollbacks === 1 ? cancelledStatement() : message);
        }
      });
      upstream.on("end", () => socket.end());
    });
    try {
      const failure = await viaProxy.sql
        .begin(async (sql) => {
          await sql.unsafe("select 1");
          throw new Error("the body's own failure");
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toMatchObject({ message: "the body's own failure" });
      expect(rollbacks).toBe(2);
      // The pool's one connection answers, and outside any transaction (in
      // one, now() would be the transaction's start).
      expect(await viaProxy.sql.unsafe("select now() = statement_timestamp() as alone")).toEqual([
        { alone: true },
      ]);
    } finally {
      await close();
    }
  });

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
    // The second insert's own failure: the loss in whichever form reached the
    // client first (the server's 57P01, the reset, postgres.js's close), each
    // answered to an agent as the database being unavailable.
    expect(failure).toMatchObject({
      code: expect.stringMatching(/^(CONNECTION_CLOSED|57P01|ECONNRESET)$/),
    });
    expect(isDatabaseUnavailable(failure)).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    await answers();
    expect(await admin`select count(*)::int as n from kept`).toEqual([{ n: 0 }]);
  });
});
