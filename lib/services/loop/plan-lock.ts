/**
 * How the loop's one-statement reads and writes lock their plan, and tell
 * whether what they read is current. Text, for the fixed statements of this
 * folder, where the plan's id is `$1` and the tenant's `$2`.
 *
 * A statement reads as of its start, possibly before it got the plan's lock.
 * Every call that changes a plan's steps under an exclusive lock also updates
 * the plan row, so when the locked row is still the one the statement's
 * snapshot holds (`LOCKED_PLAN_IS_CURRENT`), the statement's reads of the
 * steps are current.
 */
import "server-only";

/**
 * The CTE `plan`: the plan row locked (the plan first, as everywhere) in
 * `mode`, with `columns` and its row version; with `skip locked`, no row
 * while another call holds the plan.
 */
export function lockedPlanCte(
  columns: string,
  mode: "share" | "update" | "update skip locked",
): string {
  return `plan as materialized (
    select ${columns}, xmin as version from research_plan
    where id = $1::uuid and tenant_id = $2::uuid
    for ${mode}
  )`;
}

/** Over the CTE `plan`: whether the locked row is the one the statement's snapshot holds. */
export const LOCKED_PLAN_IS_CURRENT =
  "plan.version = (select xmin from research_plan where id = $1::uuid)";
