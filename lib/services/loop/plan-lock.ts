/**
 * How the loop's one-statement reads and writes lock their plan, and tell
 * whether what they read is current. Text, for the fixed statements of this
 * folder, where the plan's id is `$1` and the tenant's `$2`.
 *
 * A statement reads as of its start, possibly before it got the plan's lock.
 * Every call that changes a plan's steps under its lock also updates the plan
 * row, so when the locked row is still the one the statement's snapshot holds
 * (`LOCKED_PLAN_IS_CURRENT`), the statement's reads of the steps are current.
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
 * The plan row's lock, by what the loop's statement does to the plan
 * (PostgreSQL's row-level lock modes):
 *
 * - `claim` (key share): a hand-out. Claims take it side by side.
 * - `commonSubmit` (no key update): the one-statement submit
 *   (`complete-step-guarded.ts`). Two of them wait for each other, so the
 *   submits of a plan's last open steps read each other's results. A claim
 *   neither waits for one nor makes it wait: the pair is as if the claim came
 *   first. The submit reads whether another step awaits input or is open, and
 *   a hand-out only moves a step from pending to in progress, open either way.
 *   The claim reads the plan's status, its free steps and its undecided
 *   checkpoints; the submit changes its own step, which it holds locked (a
 *   claim skips it, as it skips any step another call holds), and the plan's
 *   status, which the claim, come first, read before it; never a checkpoint
 *   (a checkpoint's result takes the full path).
 * - `change` (update): every other change to a plan (the full submit path,
 *   reviews, modify_plan, a cancel, the start of a plan), taken before the
 *   change updates the plan row, in its transaction. It waits for and holds
 *   off all three, and PostgreSQL marks a row locked `for update` and then
 *   updated as key-updated, so a claim that waited for it, or took its lock
 *   just after it committed, finds the locked row newer than its snapshot's
 *   (`LOCKED_PLAN_IS_CURRENT`) and reads again. A plain UPDATE would not be
 *   seen: a key share lock passes a row updated without its key.
 *
 * With 8 agents on one plan, claims in share mode and every submit exclusive
 * made each waiting claim stale behind a submit and each submit wait for the
 * claims (docs/performance.md, "The change: claims beside submits").
 */
export const PLAN_LOCK = {
  claim: "key share",
  commonSubmit: "no key update",
  change: "update",
} as const;

type PlanLock = (typeof PLAN_LOCK)[keyof typeof PLAN_LOCK];

/**
 * The CTE `name` (`plan` unless named): the plan row locked (the plan first,
 * as everywhere) in `mode`, with `columns` and its row version, if it meets
 * the further test `also` (SQL text starting with ` and`); with `skip
 * locked`, no row while another call holds the plan in a mode that conflicts.
 */
export function lockedPlanCte(
  columns: string,
  mode: PlanLock | `${PlanLock} skip locked`,
  { name = "plan", also = "" }: { name?: string; also?: string } = {},
): string {
  return `${name} as materialized (
    select ${columns}, xmin as version from research_plan
    where ${planOfTenant("research_plan")}${also}
    for ${mode}
  )`;
}

/** Over the CTE `plan`: whether the locked row is the one the statement's snapshot holds. */
export const LOCKED_PLAN_IS_CURRENT =
  "plan.version = (select xmin from research_plan where id = $1::uuid)";
