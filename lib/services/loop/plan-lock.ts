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
 * The plan `$1` of the tenant `$2` among `research_plan` rows named `alias`,
 * found by its primary key: the tenant's test is `sameTenant`'s
 * (lib/db/same-tenant.ts) as text, so no generic plan reads the tenant's
 * every plan through its (tenant_id, updated_at) index (620 index entries a
 * lookup at 900 plans, with the old versions of each, when one did).
 */
export function planOfTenant(alias: string): string {
  return `${alias}.id = $1::uuid and ${alias}.tenant_id is not distinct from $2::uuid`;
}

/**
 * The step `$3` of the plan the CTE `plan` locked, found by its primary key:
 * its plan and tenant are tested as `samePlan` and `sameTenant` do
 * (lib/db/same-tenant.ts), so no plan serves the lookup from the plan's
 * (plan_id, step_order) index, which read every step of the plan for one.
 */
export const STEP_OF_LOCKED_PLAN = `id = $3::uuid and plan_id is not distinct from (select id from plan)
    and tenant_id is not distinct from $2::uuid`;

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
    where ${planOfTenant("research_plan")}
    for ${mode}
  )`;
}

/** Over the CTE `plan`: whether the locked row is the one the statement's snapshot holds. */
export const LOCKED_PLAN_IS_CURRENT =
  "plan.version = (select xmin from research_plan where id = $1::uuid)";
