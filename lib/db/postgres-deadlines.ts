/**
 * The PostgreSQL client's deadlines (postgres-client.ts, "Deadlines"): a wait
 * for a connection that gives up, and the watch every statement under way is
 * on, which fails it when its deadline passes or its transaction's connection
 * closes.
 */
import "server-only";
import type postgres from "postgres";

/** postgres.js waits 30 s by default; an unreachable host must fail a call sooner. */
export const CONNECT_TIMEOUT_SECONDS = 5;

type Pending = postgres.PendingQuery<postgres.Row[]>;
/** What drizzle uses of a postgres.js query: awaiting it, or its rows as arrays. */
export type QueryStandIn = PromiseLike<unknown> & { values(): PromiseLike<unknown> };

/** How often the statements in flight are checked against their deadline. */
const SWEEP_EVERY_MS = 1_000;

function deadlinePassed(ms: number): Error {
  return Object.assign(new Error(`The database did not answer within ${ms / 1000} seconds.`), {
    code: "CONNECT_TIMEOUT",
  });
}

/**
 * `waiting` (a connection postgres.js is to reserve) or a deadline error after
 * `ms`; a connection that arrives too late is given back.
 */
export async function reserveWithin(
  waiting: Promise<postgres.ReservedSql>,
  ms: number,
): Promise<postgres.ReservedSql> {
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  try {
    return await Promise.race([
      waiting,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          late = true;
          waiting.then((reserved) => reserved.release()).catch(() => {});
          reject(deadlinePassed(ms));
        }, ms);
      }),
    ]);
  } finally {
    if (!late) clearTimeout(timer);
  }
}

/** How a statement under way is failed. */
type Fail = (error: Error, cancel: boolean) => void;

/**
 * What a deadline watches: a transaction (one for its whole life, its
 * statements one after the other) or a statement sent on its own. The clock
 * restarts with each statement, so the deadline is a statement's, but a
 * transaction registers with `Deadlines` once, not once per statement.
 */
export class Watch {
  /** The statements under way: each one's way to fail. */
  private readonly inFlight = new Set<Fail>();
  /** When the oldest statement under way started (or was next in line). */
  since = 0;
  /** Why every statement fails from now on (its transaction's connection closed). */
  private closedWith: Error | undefined;

  /** `fail` runs if the deadline passes or `end` is called before `done` (what this returns). */
  track(fail: Fail): () => void {
    if (this.closedWith) {
      fail(this.closedWith, false);
      return () => {};
    }
    if (this.inFlight.size === 0) this.since = Date.now();
    this.inFlight.add(fail);
    return () => {
      this.inFlight.delete(fail);
      // The next in line starts now on the transaction's one connection.
      this.since = Date.now();
    };
  }

  get busy(): boolean {
    return this.inFlight.size > 0;
  }

  /** The deadline's error once one passed (`end` with `cancel`): the connection is silent. */
  expiredWith: Error | undefined;

  /** Fails every statement under way (and asks the server to cancel them: `cancel`). */
  end(error: Error, cancel: boolean) {
    if (cancel) this.expiredWith ??= error;
    for (const fail of this.inFlight) fail(error, cancel);
    this.inFlight.clear();
  }

  /** Fails every statement under way and every one after. */
  close(error: Error) {
    this.closedWith = error;
    // Nothing to cancel on a connection that is gone.
    this.end(error, false);
  }
}

/**
 * The watches with a deadline: one sweep a second fails the statements past
 * it, instead of a timer per statement on the loop's hot path (the
 * benchmark's core step). So a statement past its deadline fails between `ms`
 * and a second later.
 */
export class Deadlines {
  private readonly watches = new Set<Watch>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(readonly ms: number) {}

  /** Watched until `done` (what this returns) runs. */
  start(watch: Watch): () => void {
    this.watches.add(watch);
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), SWEEP_EVERY_MS);
      // A process with nothing else to do must not stay up for the sweep.
      this.sweeper.unref();
    }
    return () => this.watches.delete(watch);
  }

  private sweep() {
    const now = Date.now();
    for (const watch of this.watches) {
      if (watch.busy && now - watch.since >= this.ms) watch.end(deadlinePassed(this.ms), true);
    }
    if (this.watches.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}

/**
 * Asks the server to cancel `query`. postgres.js's `cancel()` sends the
 * request on a connection of its own and drops that request's promise, which
 * fails when the connection is refused, reset or cannot be routed: the kind of
 * outage a deadline is for. Unobserved, that is an unhandled rejection: an
 * error logged by Next's listener in the server, the end of any other Node
 * process (the CLI). So the query's canceller, which `cancel()` calls, is
 * called here with its failure observed (postgres.js 3.4, pinned in
 * package.json); a query without one (another version) falls back to
 * `cancel()`, whose answer is observed in case it is that promise.
 */
function cancelQuery(query: Pending): void {
  const internals = query as unknown as {
    canceller?: ((query: Pending) => Promise<void>) | null;
  };
  const canceller = internals.canceller;
  if (typeof canceller !== "function") {
    Promise.resolve(query.cancel() as unknown).catch(() => {});
    return;
  }
  // As `cancel()` does: one request per query.
  internals.canceller = null;
  canceller(query).catch(() => {});
}

/**
 * A query's stand-in that observes its failure and fails with its watch (its
 * deadline, its transaction's connection closing; with no watch, none: the
 * query is cancelled and the call fails). A statement sent on its own gets a
 * watch of its own from `ownWatch`, only when it is awaited.
 */
export function watched(
  query: Pending,
  onError: (error: unknown) => void,
  watch: Watch | undefined,
  ownWatch?: () => { watch: Watch; done: () => void },
) {
  const settle = <T>(promise: Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      const own = watch ? undefined : ownWatch?.();
      const on = watch ?? own?.watch;
      let settled = false;
      // Assigned after `track`, which fails at once on a closed connection.
      let untrack: (() => void) | undefined;
      const finish = () => {
        settled = true;
        untrack?.();
        own?.done();
      };
      untrack = on?.track((error, cancel) => {
        if (settled) return;
        finish();
        if (cancel) cancelQuery(query);
        onError(error);
        reject(error);
      });
      promise.then(
        (value) => {
          if (settled) return;
          finish();
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          finish();
          onError(error);
          reject(error);
        },
      );
    });
  const stand: QueryStandIn = {
    values: () => settle(query.values()),
    // biome-ignore lint/suspicious/noThenProperty: drizzle awaits the driver's query object.
    then: (resolve, reject) => settle(Promise.resolve(query)).then(resolve, reject),
  };
  return stand;
}
