/**
 * How the review scheduler claims and applies due work (docs/reviews.md).
 * Everything it knows is in the database: a due review is claimed with its
 * plan by `FOR UPDATE SKIP LOCKED`, so with several app instances (and the
 * opportunistic runs of get_next_step, get_plan_status and the plan page)
 * exactly one applies it and the others pass it by. A restart loses nothing:
 * the first run after start applies every review that fell due meanwhile.
 * The kinds of due work are a deadline's action (deadline-actions.ts) and an
 * escalation chain's level (escalation-levels.ts).
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { logWarning } from "../../log";
import { DEADLINE_ACTOR_LABEL } from "../../plan-engine/review-deadlines";
import type { Actor, ServiceContext } from "../shared/context";

export const DEADLINE_ACTOR: Actor = { type: "system", id: null, label: DEADLINE_ACTOR_LABEL };

/** What a scheduler run needs besides the database: the loop's settings for the decision service. */
export type SchedulerSettings = Pick<ServiceContext, "stallThresholdSeconds" | "stepLeaseSeconds">;

export type Scope = { planId?: string; tenantId?: string };

/**
 * Where a run has got to in its order: the last review it claimed, by its
 * order's key as the database wrote it (text, so no precision is lost) and id.
 */
type Position = { key: string; id: string };

const positionRow = z.object({ claimKey: z.string() });

/**
 * Claims one review that `due` (SQL over its row `r`) selects after `after`
 * in the order of `key` (a timestamp column of `r`) and id, with its plan row
 * (the lock order every decision takes) in the caller's transaction, skipping
 * any another transaction holds. The team's row (`t`) is held in share mode
 * with it, so the policy the firing checks is the one in force until it
 * commits; a review whose team is being switched is passed by until the
 * switch has revisited it.
 */
async function claimReview<Row>(
  tx: Transaction,
  claim: Claim<Row>,
  claimed: z.ZodType<Row & z.infer<typeof positionRow>>,
  scope: Scope,
  after: Position | null,
): Promise<(Row & z.infer<typeof positionRow>) | undefined> {
  // `key >= at` first, so the key's index bounds the scan where the row comparison alone might not.
  const past = after
    ? sql`and ${claim.key} >= ${after.key}::timestamptz
        and (${claim.key}, r.id) > (${after.key}::timestamptz, ${after.id}::uuid)`
    : sql``;
  const [row] = await selectRows(
    tx,
    claimed,
    sql`select ${claim.columns}, ${claim.key}::text as "claimKey"
      from review_request r join research_plan p on p.id = r.plan_id
        join tenant t on t.id = r.tenant_id
      where ${claim.due} ${past}
        and (${scope.planId ?? null}::uuid is null or r.plan_id = ${scope.planId ?? null}::uuid)
        and (${scope.tenantId ?? null}::uuid is null or r.tenant_id = ${scope.tenantId ?? null}::uuid)
      order by ${claim.key}, r.id
      limit 1
      for update of p, r skip locked for share of t skip locked`,
  );
  return row;
}

export const utc = (column: string) =>
  sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

export function deadlineContext(tx: Transaction, settings: SchedulerSettings, tenantId: string) {
  const ctx: ServiceContext = {
    // The decision service runs inside the claiming transaction (its own
    // transaction becomes a savepoint), so the claim holds until it commits.
    db: tx as unknown as Database,
    tenantId,
    actor: DEADLINE_ACTOR,
    stallThresholdSeconds: settings.stallThresholdSeconds,
    stepLeaseSeconds: settings.stepLeaseSeconds,
  };
  return ctx;
}

/** How a kind of due work is claimed: the row read, its columns, which reviews are due, and their order. */
export type Claim<Row> = { row: z.ZodType<Row>; columns: SQL; due: SQL; key: SQL };

/** One kind of due work on a review: how it is claimed, and how it is applied. */
type DueWork<Row> = {
  what: string;
  claim: Claim<Row>;
  apply: (tx: Transaction, settings: SchedulerSettings, review: Row) => Promise<void>;
};

/**
 * The most reviews one run claims of one kind of due work: a tick ends, and
 * the next goes on where the due work is then, however much fell due at once.
 */
export const DUE_PER_RUN = 500;

/**
 * Claims and applies due work one review and one transaction at a time (of
 * one plan or tenant when scoped), at most `limit` claims, in the order of
 * the work's key, and returns how many it applied. Each claim starts past the
 * last one, so a review whose action fails (its transaction rolls back, and
 * it is logged) cannot hold up the reviews due after it, and a run reads each
 * review once; the next run tries it again.
 */
export async function applyEachDue<Row extends { id: string }>(
  db: Database,
  settings: SchedulerSettings,
  scope: Scope,
  work: DueWork<Row>,
  limit = DUE_PER_RUN,
): Promise<number> {
  let applied = 0;
  let after: Position | null = null;
  // The work's row with the claim's position, read by each claim.
  const claimedRow = z.intersection(work.claim.row, positionRow);
  for (let claims = 0; claims < limit; claims += 1) {
    let claimed: (Row & z.infer<typeof positionRow>) | undefined;
    let failed = false;
    try {
      claimed = await db.transaction(async (tx) => {
        const review = await claimReview(tx, work.claim, claimedRow, scope, after);
        if (review) {
          claimed = review;
          await work.apply(tx, settings, review);
        }
        return review;
      });
    } catch (error) {
      if (!claimed) throw error;
      failed = true;
      logWarning(
        `Cairn: the ${work.what} of review ${claimed.id} could not be applied; it is tried again on the next check`,
        error,
      );
    }
    if (!claimed) return applied;
    after = { key: claimed.claimKey, id: claimed.id };
    if (!failed) applied += 1;
  }
  return applied;
}
