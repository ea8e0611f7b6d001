/**
 * PGlite with every parameterised statement sent as a named prepared statement,
 * the embedded counterpart of the postgres.js `prepare: true` in client.ts.
 *
 * PGlite's `query` sends Parse (unnamed), Describe, Bind, Describe, Execute and
 * Sync on every call, each as its own trip into the WASM module, so Postgres
 * parses and plans every call again. Here the first call of a text parses it
 * once under a name of its own and keeps its parameter types; every call then
 * sends Bind, Describe, Execute and Sync in one trip, and Postgres reuses the
 * statement's plan (a generic one after five runs, where that costs no more).
 * PGlite is one connection per process, so the names live as long as the
 * instance. The rest is PGlite's `query` step for step, so results, errors,
 * locking and syncing to disk are what PGlite itself gives: parameters are
 * serialised by their type as PGlite does, rows parsed by PGlite's own
 * `parseResults`, errors are PGlite's own objects.
 */
import {
  type PGlite,
  parse,
  protocol,
  type QueryOptions,
  type Results,
  type Transaction,
} from "@electric-sql/pglite";

const { serialize } = protocol;
const { DatabaseError } = protocol.messages;
type BackendMessage = Awaited<ReturnType<PGlite["execProtocolStream"]>>[number];

type Statement = { name: string; parameterTypes: number[] };

/**
 * The statements kept at most, the least recently used closed first: texts that
 * vary with their values (an `IN` list's length) must not grow the cache
 * without end in a long-lived process. The app's own statements are far fewer.
 */
export const MAX_STATEMENTS = 1_000;

/**
 * Errors that mean a cached statement is gone (`DEALLOCATE ALL`) or cannot run
 * as prepared any more (a schema change altered its result columns or a target
 * column's type): postgres.js's list. All are raised at Bind, before anything
 * ran, so the call is prepared again and retried when no transaction block is
 * open for the error to have aborted; inside one the error stands, as with
 * postgres.js, and the next call prepares the text again.
 */
const STALE_STATEMENT_ROUTINES = new Set([
  "FetchPreparedStatement",
  "RevalidateCachedQuery",
  "transformAssignedExpr",
]);

export function preparingPglite(client: PGlite): PGlite {
  const statements = new Map<string, Statement>();
  // Names of statements dropped from the cache, closed with the next Parse.
  const toClose: string[] = [];
  let counter = 0;

  const send = (message: Uint8Array, options: QueryOptions | undefined) =>
    client.execProtocolStream(message, { syncToFs: false, onNotice: options?.onNotice });

  function forget(text: string, statement: Statement) {
    statements.delete(text);
    toClose.push(statement.name);
  }

  /** Parses `text` under a new name; cached only once Postgres accepted it. */
  async function prepare(text: string, options: QueryOptions | undefined): Promise<Statement> {
    const oldest =
      statements.size >= MAX_STATEMENTS ? statements.entries().next().value : undefined;
    if (oldest) forget(...oldest);
    const name = `cairn_${++counter}`;
    const closes = toClose.splice(0).map((old) => serialize.close({ type: "S", name: old }));
    const described = await send(
      Buffer.concat([
        ...closes,
        serialize.parse({ name, text }),
        serialize.describe({ type: "S", name }),
      ]),
      options,
    );
    const statement = { name, parameterTypes: parse.parseDescribeStatementResults(described) };
    statements.set(text, statement);
    return statement;
  }

  /**
   * One statement's messages, the caller holding PGlite's query lock. Always
   * ends with a Sync, also after an error, so the connection is ready again.
   */
  async function run(
    text: string,
    params: unknown[],
    options: QueryOptions | undefined,
    retried = false,
  ): Promise<BackendMessage[]> {
    let synced = false;
    let statement = statements.get(text);
    const cached = statement !== undefined;
    try {
      if (statement) {
        // Most recently used last: the Map's order is the eviction order.
        statements.delete(text);
        statements.set(text, statement);
      } else {
        statement = await prepare(text, options);
      }
      const { name, parameterTypes } = statement;
      const values = params.map((param, i) => {
        if (param === null || param === undefined) return null;
        const type = parameterTypes[i] as number;
        const serializer = options?.serializers?.[type] ?? client.serializers[type];
        return serializer ? serializer(param) : (param as { toString(): string }).toString();
      });
      const execute = Buffer.concat([
        serialize.bind({ statement: name, values }),
        serialize.describe({ type: "P" }),
        serialize.execute({}),
        serialize.sync(),
      ]);
      // Postgres runs the whole batch, its Sync included, even past an error.
      synced = true;
      return await send(execute, options);
    } catch (error) {
      if (!(error instanceof DatabaseError)) throw error;
      if (cached && statement && STALE_STATEMENT_ROUTINES.has(error.routine ?? "")) {
        forget(text, statement);
        if (!retried && !client.isInTransaction()) return run(text, params, options, true);
      }
      // PGlite's own error: the query, its parameters and options attached.
      throw Object.assign(error, { query: text, params, queryOptions: options });
    } finally {
      if (!synced) await send(serialize.sync(), options);
    }
  }

  /** PGlite's `query` with the statement prepared; `topLevel` outside a transaction. */
  async function query<T>(
    text: string,
    params: unknown[],
    options: QueryOptions | undefined,
    topLevel: boolean,
  ): Promise<Results<T>> {
    const messages = await run(text, params, options);
    // As PGlite's `query`: the file system is synced after a statement outside
    // a transaction, never inside one.
    if (topLevel) await client.syncToFs();
    const blob = await client._getWrittenBlob();
    return parse.parseResults(messages, client.parsers, options, blob)[0] as Results<T>;
  }

  /**
   * Statements without parameters (migrations' DDL, savepoints) are one-off
   * texts with nothing to reuse; `blob` and `paramTypes` are options drizzle
   * never passes. Those keep PGlite's own path.
   */
  const preparable = (
    params: unknown[] | undefined,
    options: QueryOptions | undefined,
  ): params is unknown[] =>
    params !== undefined && params.length > 0 && !options?.blob && !options?.paramTypes;

  function preparingTransaction(tx: Transaction): Transaction {
    return new Proxy(tx, {
      get(target, property, receiver) {
        if (property !== "query") return Reflect.get(target, property, receiver);
        return async <T>(text: string, params?: unknown[], options?: QueryOptions) => {
          if (!preparable(params, options)) return target.query<T>(text, params, options);
          if (target.closed) throw new Error("Transaction is closed");
          // Inside the transaction, which holds the transaction lock already.
          return client._runExclusiveQuery(() => query<T>(text, params, options, false));
        };
      },
    });
  }

  return new Proxy(client, {
    get(target, property) {
      if (property === "query") {
        return async <T>(text: string, params?: unknown[], options?: QueryOptions) => {
          if (!preparable(params, options)) return target.query<T>(text, params, options);
          await target._checkReady();
          // Both locks, as PGlite's `query`: never interleaved with an open transaction.
          return target._runExclusiveTransaction(() =>
            target._runExclusiveQuery(() => query<T>(text, params, options, true)),
          );
        };
      }
      if (property === "transaction") {
        return <T>(callback: (tx: Transaction) => Promise<T>) =>
          target.transaction((tx) => callback(preparingTransaction(tx)));
      }
      const value = Reflect.get(target, property, target);
      // PGlite's methods read private fields, which only the instance itself has.
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
