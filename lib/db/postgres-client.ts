/**
 * The postgres.js client under drizzle for a server database, built for the two
 * shapes past one server: a transaction pooler between Cairn and PostgreSQL, and
 * a primary that fails over to its standby.
 *
 * - Transactions are Cairn's own, on a connection postgres.js reserves: `begin`
 *   and `commit` go as simple-protocol text, never as named prepared statements,
 *   and the commit's answer is checked. postgres.js's `begin` sends `commit` as
 *   a named statement; behind a transaction pooler that name is missing on the
 *   server connection the commit lands on, postgres.js prepares it again within
 *   the aborted transaction, and PostgreSQL answers that `commit` with ROLLBACK
 *   and no error, so an acknowledged write was silently lost (postgres.js PR
 *   #1212). Here a commit PostgreSQL did not carry out is an error.
 * - Every statement is a named prepared statement (plans reused) unless
 *   CAIRN_PREPARED_STATEMENTS is off. A transaction pooler, found when the
 *   client opens or at the first "prepared statement … does not exist", is
 *   told (what to set) and turns them off for the rest of the process: behind
 *   one, postgres.js prepares a lost statement again and, with other
 *   statements pipelined on the connection, can hand their rows to the wrong
 *   caller, and calls would fail one by one.
 * - Deadlines: every transaction carries a `statement_timeout`, every statement
 *   and every wait for a connection a deadline of its own a little later (a
 *   server that does not answer at all, no primary to connect to; a
 *   transaction's statements share one watch, registered once), connecting
 *   gives up after CONNECT_TIMEOUT_SECONDS, and a transaction whose connection
 *   closes fails at once (postgres.js would hang its next statement and throw
 *   an uncaught TypeError, its issues #1154 and #1208).
 * - A statement refused as read-only (a standby) or whose connection was lost
 *   drops every connection, so the pool connects afresh and finds the primary.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { logWarning } from "../log";
import {
  CONNECT_TIMEOUT_SECONDS,
  Deadlines,
  type QueryStandIn,
  reserveWithin,
  Watch,
  watched,
} from "./postgres-deadlines";
import {
  CONNECTION_LOST,
  CommitNotCarriedOut,
  codeOf,
  connectionClosed,
  PREPARED_STATEMENT_MISSING,
  READ_ONLY,
} from "./postgres-failures";
import { behindTransactionPooler, POOLER_ADVICE } from "./postgres-pooler";

/** The most distinct statement texts a pool names (prepares once per connection). */
export const MAX_NAMED_STATEMENTS = 1_000;

/** How long closing the client waits for statements under way. */
const CLOSE_TIMEOUT_SECONDS = 5;
/** How long a lost listening connection waits before it connects again. */
const RELISTEN_AFTER_MS = 1_000;
/** The pool is replaced at most this often (a standby's read-only refusals). */
const RENEW_AT_MOST_EVERY_MS = 5_000;
/** The longest a statement in a transaction may run (migrations excepted). */
const STATEMENT_TIMEOUT_MS = 30_000;
/** How long past the server's own deadline the client waits before it deems the server lost. */
const CLIENT_MARGIN_MS = 5_000;

export type PostgresClientOptions = {
  url: string;
  maxConnections: number;
  /** Named prepared statements (CAIRN_PREPARED_STATEMENTS); off for a pooler that cannot carry them. */
  preparedStatements: boolean;
  onQuery?: (query: string) => void;
  /** STATEMENT_TIMEOUT_MS unless given (tests shorten it to see a deadline pass). */
  statementTimeoutMs?: number;
};

/**
 * What a listener hears: a notification, or that it may have missed some (it
 * listens again, or not), or "changing": a statement of this client's own told
 * its session, by a notice with the channel's name, that it changed what the
 * channel is about, before its result and before its commit, which the
 * notification follows a moment after (drizzle/0036_own_credential_changes.sql).
 */
export type ListenEvent = "notified" | "listening" | "lost" | "changing";

export type PostgresClient = {
  /** What drizzle is given: postgres.js's `Sql` as far as drizzle uses it. */
  sql: postgres.Sql;
  /**
   * Notifications on `channel`, on a connection of their own that listens
   * again after it was lost; "listening" once a probe sent from another
   * connection was heard on it. Never "listening" with named prepared
   * statements off: behind a transaction pooler a LISTEN lands on a server
   * connection that others share, and nothing reaches it.
   */
  listen(channel: string, onEvent: (event: ListenEvent) => void): void;
  /** Runs `work` with no statement deadline (migrations). */
  withoutDeadline<T>(work: () => Promise<T>): Promise<T>;
  end(): Promise<void>;
};

/** Every statement named (see `noteNamed`): one options object, not one per statement. */
const PREPARED: postgres.UnsafeQueryOptions = { prepare: true };

export async function openPostgresClient(options: PostgresClientOptions): Promise<PostgresClient> {
  let prepare = options.preparedStatements;
  if (prepare && (await behindTransactionPooler(options.url))) {
    prepare = false;
    logWarning(POOLER_ADVICE);
  }
  let deadline = true;
  const statementTimeoutMs = options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
  // Past the server's own deadline: the server did not answer at all (a lost host).
  const deadlines = new Deadlines(statementTimeoutMs + CLIENT_MARGIN_MS);
  /** What a transaction does when its connection closes, by connection id. */
  const onClose = new Map<number, () => void>();
  const { onQuery } = options;
  /** The listeners of each channel (`listen`), told of this client's own changes. */
  const ownChanges = new Map<string, ((event: ListenEvent) => void)[]>();
  /** How many such notices were read: a transaction that read one tells again at its commit. */
  let ownChangesRead = 0;
  const tellOwnChange = (channel: string) => {
    for (const onEvent of ownChanges.get(channel) ?? []) onEvent("changing");
  };

  // postgres.js reads connect_timeout from the URL too; an operator's choice there wins.
  const connectTimeout = /[?&]connect_timeout=/.test(options.url)
    ? {}
    : { connect_timeout: CONNECT_TIMEOUT_SECONDS };

  const make = () =>
    postgres(options.url, {
      max: options.maxConnections,
      prepare,
      ...connectTimeout,
      // A notice with a listened channel's name: a change of this process's own
      // (see ListenEvent), read before the statement's result is.
      onnotice: ({ message = "" }: postgres.Notice) => {
        if (!ownChanges.has(message)) return;
        ownChangesRead += 1;
        tellOwnChange(message);
      },
      // Counting statements (the server-step bench) needs postgres.js's debug
      // hook, which makes it capture a stack for every query: only then. With
      // it set, postgres.js makes a failed query's statement and values
      // enumerable on its error; lib/log.ts masks such errors by their shape,
      // whatever is enumerable (tests/log-masking-http.test.ts).
      ...(onQuery ? { debug: (_connection: number, query: string) => onQuery(query) } : {}),
      onclose: (connection: number) => onClose.get(connection)?.(),
    });

  /**
   * The statement texts this pool's connections hold as named prepared
   * statements. postgres.js keeps every named statement of a connection until
   * it closes, so without a bound each distinct text (a list of another length,
   * before lists were one array parameter) grew every backend's memory. At
   * MAX_NAMED_STATEMENTS the pool is replaced (its connections finish what they
   * run, then close and free theirs) and the count starts again, as PGlite's
   * route closes its least recently used (pglite-prepared.ts).
   */
  const named = new Set<string>();
  // As PGlite's route keeps (MAX_STATEMENTS in pglite-prepared.ts, which this
  // module does not import: it loads PGlite).
  const noteNamed = (text: string) => {
    if (named.has(text)) return;
    if (named.size >= MAX_NAMED_STATEMENTS) {
      named.clear();
      // After this statement is under way on the pool it was given: a pool
      // being replaced takes no new statement.
      setImmediate(() =>
        renew(
          `${MAX_NAMED_STATEMENTS} distinct statements were prepared: the pool's connections are replaced to free them.`,
          true,
        ),
      );
    }
    named.add(text);
  };

  /** Connections that listen for notifications (`listen`), closed with the client. */
  const listeners = new Set<postgres.Sql>();
  let ended = false;

  let current = make();
  /** Replaced pools still finishing what they run. */
  const ending = new Set<Promise<void>>();

  let renewedAt = 0;
  /** Replaces the pool (old connections finish what they run, then close). */
  function renew(reason: string, always = false) {
    // A client ended has no pool to replace: a new one would never be ended.
    if (ended) return;
    // One renewal for a burst of failures; a URL that reaches only a standby
    // must not churn pools call by call.
    if (!always && Date.now() - renewedAt < RENEW_AT_MOST_EVERY_MS) return;
    renewedAt = Date.now();
    const old = current;
    current = make();
    // drizzle set its type parsers on the first client's options.
    Object.assign(current.options.parsers, old.options.parsers);
    Object.assign(current.options.serializers, old.options.serializers);
    logWarning(reason);
    // A transaction already under way on the old pool (one connection was
    // lost, not all) may finish within its deadline before it is closed.
    const end = old.end({ timeout: Math.ceil(deadlines.ms / 1000) });
    ending.add(end);
    void end.finally(() => ending.delete(end));
  }

  /** Reacts to a failed statement of the pool `from`: see the module comment. */
  function observe(from: postgres.Sql, error: unknown) {
    if (from !== current) return;
    const code = codeOf(error);
    if (code && PREPARED_STATEMENT_MISSING.has(code) && prepare) {
      prepare = false;
      // Behind a pooler a LISTEN hears nothing: its listeners stop (see `listen`).
      for (const listener of listeners) void listener.end({ timeout: 0 });
      renew(
        `The database lost a prepared statement between two statements: ${POOLER_ADVICE}`,
        true,
      );
    } else if (code === READ_ONLY) {
      renew(
        "The database refused a write as read-only (a standby): reconnecting to find the primary. Add target_session_attrs=primary to a multi-host DATABASE_URL.",
      );
    } else if (code && CONNECTION_LOST.has(code)) {
      // Not held back like the standby's refusals: statements that failed
      // together on one pool renew it once (the others are from the old pool).
      renew("A database connection was lost or stopped answering: reconnecting.", true);
    }
  }

  /** A statement sent on its own: its own watch, with a deadline. */
  const ownWatch = () => {
    const watch = new Watch();
    return { watch, done: deadlines.start(watch) };
  };

  function unsafe(
    pool: postgres.Sql,
    on: postgres.Sql | postgres.ReservedSql,
    /** The transaction's watch; none for a statement sent on its own. */
    watch: Watch | undefined,
    text: string,
    params: unknown[] = [],
    queryOptions?: postgres.UnsafeQueryOptions,
  ) {
    // Named unless the pool's `prepare` is off: postgres.js's own default sends
    // an `unsafe` query unnamed, and drizzle sends every query through it. The
    // count of names bounds them (`noteNamed`).
    noteNamed(text);
    return watched(
      on.unsafe(
        text,
        params as postgres.ParameterOrJSON<never>[],
        queryOptions ? { ...queryOptions, prepare: true } : PREPARED,
      ),
      (error) => observe(pool, error),
      watch,
      watch || !deadline ? undefined : ownWatch,
    );
  }

  /**
   * A transaction on a reserved connection: begin (with the statement deadline)
   * and commit as simple-protocol text, savepoints for drizzle's nested ones.
   * One watch for the whole transaction: its deadline (unless off) and its
   * connection closing.
   */
  async function transaction<T>(body: (sql: postgres.Sql) => Promise<T>): Promise<T> {
    const pool = current;
    // While no primary is reachable postgres.js waits for one without end.
    const reserved = await reserveWithin(pool.reserve(), deadlines.ms);
    const watch = new Watch();
    const unwatch = deadline ? deadlines.start(watch) : undefined;
    let connection: number | undefined;
    let isClosed = false;
    // postgres.js names the connection a query went to only to its `onexecute`
    // (its own `begin` learns its connection the same way).
    const onexecute = ({ id }: { id: number }) => {
      connection = id;
      onClose.set(id, () => {
        isClosed = true;
        watch.close(connectionClosed());
      });
    };
    const send = (text: string, params?: unknown[], queryOptions?: postgres.UnsafeQueryOptions) => {
      // Nothing more is sent on a closed connection, nor on one silent past its
      // deadline, where a statement (a savepoint's rollback, the commit of a
      // body that caught the failure) would wait a deadline of its own behind
      // the silent one, or commit what the caller was told had failed.
      const refusal = isClosed ? connectionClosed() : watch.expiredWith;
      if (refusal) {
        // As a query would fail: drizzle reads rows through `.values()`.
        const failed = () => Promise.reject(refusal);
        const stand: QueryStandIn = {
          values: failed,
          // biome-ignore lint/suspicious/noThenProperty: drizzle awaits the driver's query object.
          then: (resolve, reject) => failed().then(resolve, reject),
        };
        return stand;
      }
      return unsafe(pool, reserved, watch, text, params, queryOptions);
    };
    let savepoints = 0;
    const scoped = (): postgres.Sql =>
      ({
        options: pool.options,
        unsafe: send,
        savepoint: async <R>(inner: (sql: postgres.Sql) => Promise<R>): Promise<R> => {
          const name = `s${++savepoints}`;
          await send(`savepoint ${name}`);
          try {
            const result = await inner(scoped());
            await send(`release savepoint ${name}`);
            return result;
          } catch (error) {
            if (!isClosed && !watch.expiredWith) {
              // Its failure would hide the cause. The transaction is aborted
              // then, so it fails at its next statement and is rolled back.
              await Promise.resolve(send(`rollback to savepoint ${name}`)).then(
                undefined,
                (failure) => logWarning("A savepoint's rollback failed.", failure),
              );
            }
            throw error;
          }
        },
      }) as unknown as postgres.Sql;

    /** Whether the connection may serve another caller once this transaction ends. */
    let reusable = true;
    /**
     * Ends the transaction after `body` failed; its failure never hides the
     * error that caused it. A rollback that fails on an open connection (a
     * cancel request landing on it, an operator's or one that arrived late)
     * can leave the transaction open and aborted, and whoever is handed the
     * connection next would fail with 25P02. So the connection is not given
     * back, and its pool is replaced, which closes it.
     */
    const rollback = async () => {
      if (isClosed) return;
      const failure = await Promise.resolve(send("rollback")).then(
        () => undefined,
        (error: unknown) => error,
      );
      if (failure === undefined || isClosed) return;
      reusable = false;
      if (pool === current) {
        logWarning("A transaction's rollback failed.", failure);
        renew(
          "A transaction's rollback failed: reconnecting, so its connection is not reused.",
          true,
        );
      }
    };

    const ownChangesBefore = ownChangesRead;
    try {
      const timeout = deadline ? `; set local statement_timeout = ${statementTimeoutMs}` : "";
      await send(`begin${timeout}`, [], { onexecute } as postgres.UnsafeQueryOptions);
      let result: T;
      try {
        result = await body(scoped());
      } catch (error) {
        // A connection silent past its deadline is not rolled back (`send`):
        // its pool was replaced (`observe`) and closes it, and the server
        // rolls back a transaction whose connection closes.
        if (!watch.expiredWith) await rollback();
        throw error;
      }
      const answer = (await send("commit")) as { command?: string };
      if (answer.command !== "COMMIT") throw new CommitNotCarriedOut(answer.command ?? "nothing");
      // A change told during the transaction is committed now: told again, so
      // what a listener looked up meanwhile (as it was before) is forgotten
      // before the caller answers, however long the transaction took. Another
      // transaction's notice counts too: a listener forgets once more, no harm.
      if (ownChangesRead !== ownChangesBefore)
        for (const channel of ownChanges.keys()) tellOwnChange(channel);
      return result;
    } finally {
      unwatch?.();
      if (connection !== undefined) onClose.delete(connection);
      // A closed connection is back in postgres.js's closed queue already;
      // released, it would be handed out with no socket. One kept back (a
      // failed rollback, a deadline passed) is closed when its replaced
      // pool's end times out.
      if (!isClosed && reusable && !watch.expiredWith) reserved.release();
    }
  }

  const sql = {
    get options() {
      return current.options;
    },
    unsafe: (text: string, params?: unknown[], queryOptions?: postgres.UnsafeQueryOptions) =>
      unsafe(current, current, undefined, text, params, queryOptions),
    begin: (...args: unknown[]) =>
      transaction(args.at(-1) as (sql: postgres.Sql) => Promise<unknown>),
  } as unknown as postgres.Sql;

  function listen(channel: string, onEvent: (event: ListenEvent) => void) {
    if (!prepare) return;
    ownChanges.set(channel, [...(ownChanges.get(channel) ?? []), onEvent]);
    /**
     * The payload of this connection's probe: "listening" is said only once a
     * notification sent from the pool's connections reached this one. Behind
     * a transaction pooler the start's check missed (it handed the probe two
     * server connections), the LISTEN stays on a server connection that
     * others share, and the probe, sent on another, is never heard.
     */
    let probe: string | undefined;
    // postgres.js's own `listen` hides its connection's closing, which is
    // when notifications may be missed; `onnotify` is an option its types omit.
    const listenOptions = {
      max: 1,
      idle_timeout: 0,
      max_lifetime: null,
      ...connectTimeout,
      onnotice: () => {},
      onnotify: (name: string, payload: string) => {
        if (name !== channel) return;
        onEvent(payload === probe ? "listening" : "notified");
        if (payload === probe) probe = undefined;
      },
      onclose: () => {
        probe = undefined;
        onEvent("lost");
        if (!ended) setTimeout(start, RELISTEN_AFTER_MS).unref();
      },
    };
    const listener = postgres(options.url, listenOptions as postgres.Options<never>);
    listeners.add(listener);
    const start = () => {
      // Off, or found behind a pooler since: no longer heard (see PostgresClient.listen).
      if (!prepare) {
        onEvent("lost");
        return;
      }
      const token = `probe ${randomUUID()}`;
      listener
        .unsafe(`listen "${channel.replaceAll('"', '""')}"`)
        .then(() => {
          probe = token;
          return current.unsafe("select pg_notify($1, $2)", [channel, token]);
        })
        .catch(() => {
          // Unreachable for now: onclose tries again.
        });
    };
    start();
  }

  return {
    sql,
    listen,
    async withoutDeadline(work) {
      deadline = false;
      try {
        return await work();
      } finally {
        deadline = true;
      }
    },
    async end() {
      // Replaced pools are waited for as long as the current one, not their
      // own deadline: a closing process must not wait on a lost host.
      let timer: NodeJS.Timeout | undefined;
      const closing = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_TIMEOUT_SECONDS * 1000);
        timer.unref();
      });
      ended = true;
      await Promise.all([
        current.end({ timeout: CLOSE_TIMEOUT_SECONDS }),
        ...[...listeners].map((listener) => listener.end({ timeout: 0 })),
        Promise.race([Promise.all(ending), closing]),
      ]);
      clearTimeout(timer);
    },
  };
}
