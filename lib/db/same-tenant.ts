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
 */
import { type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";

export function sameTenant(tenantColumn: PgColumn, tenantId: string): SQL {
  return sql`${tenantColumn} is not distinct from ${tenantId}::uuid`;
}
