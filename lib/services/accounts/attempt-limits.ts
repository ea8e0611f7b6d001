/**
 * Limits on guessing: sign-in (and a signed-in user's password change) per
 * e-mail and per client address, and the first-run set-up per client address;
 * and on what anyone may make Cairn do without an account: OAuth client
 * registrations and client metadata document fetches per client address.
 *
 * Every attempt is counted by one upsert BEFORE anything expensive happens (a
 * password check is an scrypt hash: 128 MiB and about half a second of a core),
 * so a refused attempt costs one indexed statement, and parallel attempts cannot
 * all slip through a read-then-write gap. The counters live in PostgreSQL, so
 * every app instance sees the same ones.
 *
 * A key may make `limit` attempts per `windowSeconds`; the next one is refused
 * and blocks the key for `firstBlockSeconds`, doubled at each block after
 * (up to `maxBlockSeconds`), so a guesser gets `limit` tries per block. Attempts
 * refused while blocked are not counted. A key untouched for a day is forgotten.
 * A successful sign-in clears its e-mail's counter, never its address's (one
 * valid account must not buy a guesser more tries on others).
 */
import "server-only";
import { createHash } from "node:crypto";
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { selectRows } from "../../db/rows";
import { attemptLimits } from "../../db/schema";
import { isoTime } from "../../db/statement";
import { logUnexpected } from "../../log";

export type AttemptPolicy = {
  limit: number;
  windowSeconds: number;
  firstBlockSeconds: number;
  maxBlockSeconds: number;
};

export const ATTEMPT_POLICIES = {
  /** Per e-mail, whether or not an account has it (refusals must not reveal which exist). */
  sign_in_account: {
    limit: 5,
    windowSeconds: 15 * 60,
    firstBlockSeconds: 60,
    maxBlockSeconds: 60 * 60,
  },
  /** Per client address: more, for several people behind one NAT. */
  sign_in_address: {
    limit: 100,
    windowSeconds: 15 * 60,
    firstBlockSeconds: 5 * 60,
    maxBlockSeconds: 60 * 60,
  },
  /** OAuth Dynamic Client Registrations per client address: registration needs no account. */
  oauth_registration_address: {
    limit: 30,
    windowSeconds: 60 * 60,
    firstBlockSeconds: 10 * 60,
    maxBlockSeconds: 60 * 60,
  },
  /**
   * OAuth client metadata documents fetched per client address: /authorize
   * fetches one for any URL named as client_id, without an account.
   */
  oauth_metadata_document_address: {
    limit: 30,
    windowSeconds: 60 * 60,
    firstBlockSeconds: 10 * 60,
    maxBlockSeconds: 60 * 60,
  },
  /** First-run set-up codes tried per client address. */
  setup_address: {
    limit: 10,
    windowSeconds: 15 * 60,
    firstBlockSeconds: 60,
    maxBlockSeconds: 60 * 60,
  },
} as const satisfies Record<string, AttemptPolicy>;

export type AttemptKind = keyof typeof ATTEMPT_POLICIES;
export type AttemptKey = { kind: AttemptKind; key: string };

/** A key whose counter has not moved for this long starts over (its blocks forgotten). */
const FORGET_AFTER_SECONDS = 24 * 60 * 60;

export type AttemptGate = { allowed: true } | { allowed: false; retryAt: Date };

/** The counter key of an e-mail: hashed, so the table does not collect what people type. */
export function accountKey(email: string): AttemptKey {
  const normalized = email.trim().toLowerCase();
  return {
    kind: "sign_in_account",
    key: createHash("sha256").update(normalized).digest("hex"),
  };
}

/** A password check's keys, the e-mail's before the address's: attempt counters are always locked in that order. */
export function passwordAttemptKeys(email: string, address: string): AttemptKey[] {
  return [accountKey(email), { kind: "sign_in_address", key: address }];
}

function perKind(column: (policy: AttemptPolicy) => number) {
  const cases = Object.entries(ATTEMPT_POLICIES).map(
    ([kind, policy]) => sql`when ${kind} then ${column(policy)}::int`,
  );
  return sql`(case ${attemptLimits.kind} ${sql.join(cases, sql` `)} end)`;
}

/**
 * Counts one attempt against every key, in one statement (rows are locked in the
 * order given, so callers always give an e-mail key before an address key), and
 * says whether it may go ahead; when any key is blocked, until when.
 */
export async function registerAttempt(
  db: Executor,
  keys: readonly AttemptKey[],
  now: Date = new Date(),
): Promise<AttemptGate> {
  if (keys.length === 0) return { allowed: true };
  const at = sql`${now.toISOString()}::timestamptz`;
  const t = attemptLimits;
  const limit = perKind((p) => p.limit);
  const windowSeconds = perKind((p) => p.windowSeconds);
  const firstBlock = perKind((p) => p.firstBlockSeconds);
  const maxBlock = perKind((p) => p.maxBlockSeconds);
  // The old row's state, as each SET expression sees it.
  const blocked = sql`(${t.blockedUntil} is not null and ${t.blockedUntil} > ${at})`;
  const forgotten = sql`(${t.updatedAt} <= ${at} - make_interval(secs => ${FORGET_AFTER_SECONDS}))`;
  const windowOver = sql`(${forgotten} or ${t.windowStartedAt} <= ${at} - make_interval(secs => ${windowSeconds}))`;
  const counted = sql`(case when ${windowOver} then 1 else ${t.attempts} + 1 end)`;
  const over = sql`(not ${blocked} and ${counted} > ${limit})`;
  const blocks = sql`(case when ${forgotten} then 0 else ${t.blocks} end)`;
  const blockSeconds = sql`least(${firstBlock}::float8 * power(2, least(${blocks}, 30)), ${maxBlock})`;

  const values = keys.map(
    ({ kind, key }) => sql`(${kind}, ${key}, 1, ${at}, null::timestamptz, 0, ${at})`,
  );
  const rows = await selectRows(
    db,
    z.object({ blocked_until: isoTime.nullable() }),
    sql`insert into ${t} (kind, key, attempts, window_started_at, blocked_until, blocks, updated_at)
      values ${sql.join(values, sql`, `)}
      on conflict (kind, key) do update set
        attempts = case when ${blocked} then ${t.attempts} when ${over} then 0 else ${counted} end,
        window_started_at = case
          when ${blocked} then ${t.windowStartedAt}
          when ${over} or ${windowOver} then ${at}
          else ${t.windowStartedAt} end,
        blocked_until = case
          when ${blocked} then ${t.blockedUntil}
          when ${over} then ${at} + make_interval(secs => ${blockSeconds})
          else null end,
        blocks = case when ${blocked} then ${t.blocks} when ${over} then ${blocks} + 1 else ${blocks} end,
        updated_at = ${at}
      returning blocked_until`,
  );
  let retryAt: Date | undefined;
  for (const row of rows) {
    if (row.blocked_until === null) continue;
    const until = new Date(row.blocked_until);
    if (until > now && (!retryAt || until > retryAt)) retryAt = until;
  }
  pruneNowAndThen(db, now);
  return retryAt ? { allowed: false, retryAt } : { allowed: true };
}

/** Until when a key is blocked, without counting an attempt (to word a refusal); null when it is not. */
export async function blockedUntil(
  db: Executor,
  keys: readonly AttemptKey[],
  now: Date = new Date(),
): Promise<Date | null> {
  let latest: Date | null = null;
  for (const { kind, key } of keys) {
    const [row] = await db
      .select({ blockedUntil: attemptLimits.blockedUntil })
      .from(attemptLimits)
      .where(and(eq(attemptLimits.kind, kind), eq(attemptLimits.key, key)));
    const until = row?.blockedUntil;
    if (until && until > now && (!latest || until > latest)) latest = until;
  }
  return latest;
}

/** Forgets a key's attempts (a successful sign-in clears its e-mail's counter). */
export async function clearAttempts(db: Executor, { kind, key }: AttemptKey): Promise<void> {
  await db
    .delete(attemptLimits)
    .where(and(eq(attemptLimits.kind, kind), eq(attemptLimits.key, key)));
}

const PRUNE_EVERY_MS = 10 * 60 * 1000;
let lastPrune = 0;

/** At most every ten minutes per process, off the request's path: drops counters nobody touched for a day. */
function pruneNowAndThen(db: Executor, now: Date) {
  if (Math.abs(now.getTime() - lastPrune) < PRUNE_EVERY_MS) return;
  lastPrune = now.getTime();
  const cutoff = new Date(now.getTime() - FORGET_AFTER_SECONDS * 1000);
  void db
    .delete(attemptLimits)
    .where(
      and(
        lt(attemptLimits.updatedAt, cutoff),
        or(isNull(attemptLimits.blockedUntil), lt(attemptLimits.blockedUntil, now)),
      ),
    )
    .catch((error: unknown) => logUnexpected("Could not prune old attempt counters", error));
}

/** "Try again in 4 minutes." — what a refusal tells a person. */
export function tryAgainIn(retryAt: Date, now: Date = new Date()): string {
  const seconds = Math.max(1, Math.ceil((retryAt.getTime() - now.getTime()) / 1000));
  if (seconds < 60) return `Try again in ${seconds} second${seconds === 1 ? "" : "s"}.`;
  const minutes = Math.ceil(seconds / 60);
  return `Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}
