/**
 * The claim rule has one definition, the engine's `isClaimable`
 * (lib/plan-engine/claims.ts), and one SQL form the hand-out statements embed
 * (`claimableStep` in lib/services/loop/leases.ts). This checks that the two
 * agree for every step status and lease (none, run out, exactly now, live), on
 * PGlite and on PostgreSQL 15, so a change to one that is not made to the
 * other fails here before any hand-out goes wrong.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { holdsStepsAfter } from "@/lib/plan-engine/checkpoint-guard";
import { isClaimable } from "@/lib/plan-engine/claims";
import { STEP_STATUSES, STEP_TYPES } from "@/lib/plan-engine/states";
import { claimableStep, notHeldByCheckpoint } from "@/lib/services/loop/leases";
import { BACKENDS } from "../support/databases";
import { useFreshTenant } from "../support/in-process";
import { readRows } from "../support/rows";

const NOW = new Date("2026-11-25T12:00:00.000Z");
const LEASES = [
  null,
  new Date(NOW.getTime() - 60_000),
  NOW,
  new Date(NOW.getTime() + 1),
  new Date(NOW.getTime() + 60_000),
];

describe.each(BACKENDS)("the claim rule on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("is the same in SQL as in the engine, for every status and lease", async () => {
    const cases = STEP_STATUSES.flatMap((status) =>
      LEASES.map((leaseExpiresAt) => ({ status, leaseExpiresAt })),
    );
    const rows = await readRows<{ i: number; claimable: boolean }>(
      tenant.handle.db,
      sql`select c.i::int as i, ${sql.raw(claimableStep("s", `'${NOW.toISOString()}'::timestamptz`))} as claimable
        from jsonb_to_recordset(${JSON.stringify(
          cases.map((c, i) => ({
            i,
            status: c.status,
            lease: c.leaseExpiresAt?.toISOString() ?? null,
          })),
        )}::jsonb) as c(i int, status step_status, lease timestamptz),
        lateral (select c.status, c.lease as lease_expires_at) as s
        order by c.i`,
    );
    expect(rows).toHaveLength(cases.length);
    for (const row of rows) {
      const step = cases[row.i];
      expect({ ...step, claimable: row.claimable }).toEqual({
        ...step,
        claimable: isClaimable(step as NonNullable<typeof step>, NOW),
      });
    }
    // The grid has both answers, so agreeing is not trivial.
    expect(new Set(rows.map((row) => row.claimable))).toEqual(new Set([true, false]));
  });

  it("holds the steps after an undecided checkpoint the same in SQL as in the engine", async () => {
    // Every type and status of an earlier step, each in a plan of its own with a step after it.
    const cases = STEP_TYPES.flatMap((stepType) =>
      STEP_STATUSES.map((status) => ({ stepType, status })),
    );
    // A CTE named plan_step stands in for the table the SQL form reads.
    const rows = await readRows<{ i: number; free: boolean }>(
      tenant.handle.db,
      sql`with plan_step as (
          select c.i as plan_id, 1 as step_order, c.step_type, c.status
          from jsonb_to_recordset(${JSON.stringify(
            cases.map((c, i) => ({ i, step_type: c.stepType, status: c.status })),
          )}::jsonb) as c(i int, step_type text, status text))
        select s.plan_id::int as i, ${sql.raw(notHeldByCheckpoint("s.plan_id", "s.step_order"))} as free
        from (select plan_id, 2 as step_order from plan_step) as s
        order by s.plan_id`,
    );
    expect(rows).toHaveLength(cases.length);
    for (const row of rows) {
      const earlier = cases[row.i];
      expect({ ...earlier, held: !row.free }).toEqual({
        ...earlier,
        held: holdsStepsAfter(earlier as NonNullable<typeof earlier>),
      });
    }
    expect(new Set(rows.map((row) => row.free))).toEqual(new Set([true, false]));
  });
});
