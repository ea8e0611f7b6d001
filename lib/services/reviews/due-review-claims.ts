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
import type { z } from "zod";
import type { Database, Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { arrayParam } from "../../db/statement";
import { logWarning } from "../../log";
import { DEADLINE_ACTOR_LABEL } from "../../plan-engine/review-deadlines";
import type { Actor, ServiceContext } from "../shared/context";

export const DEADLINE_ACTOR: Actor = { type: "system", id: null, label: DEADLINE_ACTOR_LABEL };

/** What a scheduler run needs besides the database: the loop's settings for the decision service. */
export type SchedulerSettings = Pick<ServiceContext, "stallThresholdSeconds" | "stepLeaseSeconds">;

export type Scope = { planId?: string; tenantId?: string };

/**
 * Claims one review that `due` (SQL over its row `r`) selects, earliest
 * `orderBy` first, with its plan row (the lock order every decision takes) in
 * the caller's transaction, skipping any another transaction holds. The
 * team's row (`t`) is held in share mode with it, so the policy the firing
 * checks is the one in force until it commits; a review whose team is being
 * switched is passed by until the switch has revisited it.
 */
async function claimReview<Row>(
  tx: Transaction,
  claim: { row: z.ZodType<Row>; columns: SQL; due: SQL; orderBy: SQL },
  scope: Scope,
  passedBy: string[],
): Promise<Row | undefined> {
  const [row] = await selectRows(
    tx,
    claim.row,
    sql`select ${claim.columns}
      from review_request r join research_plan p on p.id = r.plan_id
        join tenant t on t.id = r.tenant_id
      where ${claim.due}
        and (${scope.planId ?? null}::uuid is null or r.plan_id = ${scope.planId ?? null}::uuid)
        and (${scope.tenantId ?? null}::uuid is null or r.tenant_id = ${scope.tenantId ?? null}::uuid)
        and not (r.id = any(${arrayParam(passedBy)}::uuid[]))
      order by ${claim.orderBy}
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

/** One kind of due work on a review: how it is claimed, and how it is applied. */
type DueWork<Row> = {
  what: string;
  claim: { row: z.ZodType<Row>; columns: SQL; due: SQL; orderBy: SQL };
  apply: (tx: Transaction, settings: SchedulerSettings, review: Row) => Promise<void>;
};

/**
 * Claims and applies due work one review and one transaction at a time (of
 * one plan or tenant when scoped), and returns how many it applied. A review
 * whose action fails (its transaction rolls back) is logged and passed by for
 * the rest of this run, so it cannot hold up the reviews due after it; the
 * next run tries it again.
 */
export async function applyEachDue<Row extends { id: string }>(
  db: Database,
  settings: SchedulerSettings,
  scope: Scope,
  work: DueWork<Row>,
): Promise<number> {
  let applied = 0;
  const passedBy: string[] = [];
  for (;;) {
    let claimed: Row | undefined;
    try {
      claimed = await db.transaction(async (tx) => {
        const review = await claimReview(tx, work.claim, scope, passedBy);
        if (review) {
          claimed = review;
          await work.apply(tx, settings, review);
        }
        return review;
      });
    } catch (error) {
      if (!claimed) throw error;
      passedBy.push(claimed.id);
      logWarning(
        `Cairn: the ${work.what} of review ${claimed.id} could not be applied; it is tried again on the next check`,
        error,
      );
      continue;
    }
    if (!claimed) return applied;
    applied += 1;
  }
}
