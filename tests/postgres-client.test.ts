/**
 * The deadlines and the closed-connection rule of lib/db/postgres-client.ts on
 * PostgreSQL 15, with the statement timeout shortened so a deadline passes
 * within the test: a server that stops answering fails the call (never a hang),
 * a statement past `statement_timeout` is PostgreSQL's own error, and a
 * transaction whose connection closes fails at once; each time the client goes
 * on working. A listened channel's notice (a change of the client's own) is
 * told to its listener before the statement's result, and a transaction's
 * again at its commit. (Failover and poolers: tests/failover.test.ts, tests/pooler.test.ts.)
 */
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type ListenEvent,
  openPostgresClient,
  type PostgresClient,
} from "@/lib/db/postgres-client";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { createPostgresDatabase } from "./support/databases";

const STATEMENT_TIMEOUT_MS = 500;
/** The client's deadline: the statement timeout and its 5 s margin, plus one sweep. */
const CLIENT_DEADLINE_MS = STATEMENT_TIMEOUT_MS + 5_000 + 1_000;

/**
 * A proxy's relay (`throughProxy`) that keeps the first simple query `text`
 * from the server and answers it as a late cancel would: 57014, the
 * transaction left open and aborted, as the server would leave it.
 */
function cancellingFirst(text: string) {
  const counts = { connections: 0, held: 0 };
  const relay = (socket: Socket, upstream: Socket) => {
    counts.connections += 1;
    upstream.pipe(socket);
    let started = false;
    let pending = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        // A client's first message has no type byte; every later one has.
        const offset = started ? 1 : 0;
        if (pending.length < offset + 4) return;
        const size = offset + pending.readInt32BE(offset);
        if (pending.length < size) return;
        const message = pending.subarray(0, size);
        pending = pending.subarray(size);
        const isText =
          started && message[0] === 0x51 && message.subarray(5).toString() === `${text}\0`;
        started = true;
        if (isText && counts.held === 0) {
          counts.held += 1;
          socket.write(Buffer.concat([cancelledStatement(), readyForQuery("E")]));
        } else {
          upstream.write(message);
        }
      }
    });
  };
  return {
    relay,
    get connections() {
      return counts.connections;
    },
    get held() {
      return counts.held;
    },
  };
}

/** A ReadyForQuery message: `status` I (idle), T (in a transaction) or E (in a failed one). */
function readyForQuery(status: "I" | "T" | "E"): Buffer {
  return Buffer.from([0x5a, 0, 0, 0, 5, status.charCodeAt(0)]);
}

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
  /**
   * Runs `body` in a transaction of a client behind `cancellingFirst(text)`,
   * then one statement: how the transaction failed, how many queries the
   * proxy held, and how many connections the two took.
   */
  const cancelledUnderProxy = async (
    text: string,
    body: (sql: postgres.TransactionSql) => Promise<unknown>,
  ) => {
    const proxy = cancellingFirst(text);
    const { client: viaProxy, close } = await throughProxy(proxy.relay);
    // The client's checks when it opened (behindTransactionPooler) connected too.
    const before = proxy.connections;
    try {
      const failure = await viaProxy.sql.begin(body).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(await viaProxy.sql.unsafe("select 1 as one")).toEqual([{ one: 1 }]);
      return { failure, held: proxy.held, connections: proxy.connections - before };
    } finally {
      // A kept connection's pool closes it at its end's timeout (here 6 s).
      await close();
    }
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

  /**
   * Runs `body` in a transaction of the client; `stop` stops the server
   * process behind the connection it is given (resumed once the call has
   * failed). How the call failed, and how long after the stop.
   */
  const stoppedTransaction = async (
    body: (
      sql: postgres.TransactionSql,
      stop: (on: Pick<postgres.TransactionSql, "unsafe">) => Promise<void>,
    ) => Promise<void>,
  ) => {
    let pid = 0;
    let started = 0;
    const stop = async (on: Pick<postgres.TransactionSql, "unsafe">) => {
      const [row] = (await on.unsafe("select pg_backend_pid() as pid")) as unknown as {
        pid: number;
      }[];
      pid = row?.pid ?? 0;
      process.kill(pid, "SIGSTOP");
      started = Date.now();
    };
    try {
      const failure = await client.sql
        .begin((sql) => body(sql, stop))
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      return { failure, elapsed: Date.now() - started };
    } finally {
      if (pid) process.kill(pid, "SIGCONT");
    }
  };

  it("fails a transaction's statement the server never answers after the client's deadline, then goes on", async () => {
    // One deadline watches the whole transaction (begin, each statement in turn).
    const { failure, elapsed } = await stoppedTransaction(async (sql, stop) => {
      await stop(sql);
      await sql.unsafe("select 2");
    });
    expect(failure).toMatchObject({
      code: "CONNECT_TIMEOUT",
      message: expect.stringMatching(/did not answer within 5\.5 seconds/),
    });
    // At one deadline, with the server still stopped: no rollback waits on
    // the silent connection for a deadline of its own.
    expect(elapsed).toBeLessThan(CLIENT_DEADLINE_MS + 2_000);
    await answers();
  }, 20_000);

  it("sends nothing more on a transaction's connection once a deadline passed, savepoint or not", async () => {
    // A savepoint's rollback, and a body that catches the failure and goes on,
    // would each wait a deadline of their own behind the silent statement (or
    // commit what the caller was told had failed): they fail at once instead.
    const { failure, elapsed } = await stoppedTransaction(async (sql, stop) => {
      await sql
        .savepoint(async (inner) => {
          await stop(inner);
          await inner.unsafe("select 2");
        })
        .catch(() => {});
      await sql.unsafe("select 3");
    });
    expect(failure).toMatchObject({ code: "CONNECT_TIMEOUT" });
    expect(elapsed).toBeLessThan(CLIENT_DEADLINE_MS + 2_000);
    await answers();
  }, 30_000);

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

  it("keeps a failed transaction's own error when its rollback fails, and never hands out its connection again", async () => {
    // A deadline's cancel that reaches the server late lands on whatever runs
    // then, the rollback after a failed body among them. A proxy keeps the
    // first ROLLBACK from the server and answers it as that cancel would
    // (57014, the transaction still open and aborted), so the server's
    // transaction stays as a cancelled rollback leaves it.
    const { failure, held, connections } = await cancelledUnderProxy("rollback", (sql) =>
      sql.unsafe("select 1 / 0"),
    );
    // The body's own error (division by zero), not the rollback's.
    expect(failure).toMatchObject({ code: "22012" });
    expect(held).toBe(1);
    // The next statement answered on a new connection: the kept one would
    // answer 25P02 (its transaction aborted).
    expect(connections).toBe(2);
  }, 20_000);

  it("keeps a savepoint's own error when its rollback fails, and the transaction's rollback ends it", async () => {
    const { failure, held, connections } = await cancelledUnderProxy(
      "rollback to savepoint s1",
      (sql) => sql.savepoint((inner) => inner.unsafe("select 1 / 0")),
    );
    expect(failure).toMatchObject({ code: "22012" });
    expect(held).toBe(1);
    // The transaction's own rollback reached the server and ended it: the
    // connection served the next statement.
    expect(connections).toBe(1);
  });

  it("tells a channel's listener of its own change at the change's notice, and a transaction's again at its commit", async () => {
    const channel = "own_change_told";
    await client.sql.unsafe("create table own_change (id integer)");
    await client.sql.unsafe(
      `create function own_change_told() returns trigger language plpgsql as $$
       begin raise notice '${channel}'; return null; end $$`,
    );
    await client.sql.unsafe(
      "create trigger own_change after insert on own_change for each statement execute function own_change_told()",
    );
    const events: ListenEvent[] = [];
    client.listen(channel, (event) => events.push(event));
    await vi.waitFor(() => expect(events).toEqual(["listening"]));

    events.length = 0;
    await client.sql.unsafe("insert into own_change values (1)");
    expect(events).toEqual(["changing"]);
    events.length = 0;
    await client.sql.begin(async (sql) => {
      await sql.unsafe("insert into own_change values (2)");
      expect(events).toEqual(["changing"]);
      await sql.unsafe("select 1");
    });
    expect(events).toEqual(["changing", "changing"]);
    // A transaction that told nothing, and another channel's notice, tell nothing.
    events.length = 0;
    await client.sql.begin(async (sql) => sql.unsafe("select 1"));
    await client.sql.unsafe("do $$ begin raise notice 'another_channel'; end $$");
    expect(events).toEqual([]);
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
