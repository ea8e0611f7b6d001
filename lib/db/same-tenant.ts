/**
 * The tenant's test for a lookup by primary key (an id, or a list of ids):
 * `tenant_id IS NOT DISTINCT FROM the tenant`, the same test as = on a NOT
 * NULL column, which no index serves. With = the planner may serve the
 * lookup from a (tenant_id, ...) index instead of the primary key, and a
 * generic plan made while the table was small and never analysed (a new
 * deployment) priced the two alike, took the tenant's index and kept it as
 * the tenant's rows grew: every lookup read all of them (docs/performance.md,
 * "The change: where PostgreSQL's time went in a step"). Lists by tenant keep
 * = and their tenant index. The loop's fixed statements write the same test
 * as text (`planOfTenant`, lib/services/loop/plan-lock.ts).
 *
 * The same holds for a row's plan beside its id (`samePlan`): with =, a plan
 * that priced the plan's (plan_id, step_order) index as the primary key read
 * every step of the plan to find one (tests/use-cases/long-plan-step-reads.test.ts).
 */
import { type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";

/** A uuid column beside a lookup by id, equal to `id`, tested so no index serves it. */
function sameOwner(column: PgColumn, id: string): SQL {
  return sql`${column} is not distinct from ${id}::uuid`;
}

export const sameTenant = sameOwner;
export const samePlan = sameOwner;
