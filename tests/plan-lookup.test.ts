/**
 * The loop's statements find their plan by its primary key whatever the
 * database knows of the table (lib/services/loop/plan-lock.ts,
 * `planOfTenant`). A statement's generic plan is made once and cached for
 * as long as its connection lives and the table's statistics do not change;
 * made while `research_plan` was small and never analysed, as on a new
 * deployment, it took the tenant's (tenant_id, updated_at) index, and kept
 * reading every plan of the tenant through it on every call as they grew in
 * number (docs/performance.md). Here the generic plan of the lock the loop
 * takes, made on a table of one plan, on PGlite and on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { lockedPlanCte } from "@/lib/services/loop/plan-lock";
import type { ServiceContext } from "@/lib/services/shared/context";
import { BACKENDS, freshDatabase } from "./support/databases";
import { tenantContext } from "./support/in-process";
import { readRows } from "./support/rows";

describe.each(BACKENDS)("the loop's lookup of a plan on %s", (backend) => {
  let handle: DatabaseHandle;
  let ctx: ServiceContext;

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    ctx = await tenantContext(handle.db, "Lookup");
    await handle.db.execute(
      sql`insert into research_plan (tenant_id, name, research_question)
        values (${ctx.tenantId}::uuid, 'The only plan', 'q')`,
    );
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("reads the plan through its primary key in a generic plan made on a small table", async () => {
    const [plan] = await readRows<{ id: string }>(
      handle.db,
      sql`select id from research_plan where tenant_id = ${ctx.tenantId}::uuid limit 1`,
    );
    const lines = await handle.db.transaction(async (tx) => {
      await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
      await tx.execute(
        sql.raw(`prepare plan_lookup(uuid, uuid) as
          with ${lockedPlanCte("id, status", "share")} select id from plan`),
      );
      const explained = await readRows<{ "QUERY PLAN": string }>(
        tx,
        // EXPLAIN EXECUTE takes no bind parameters: the ids are the database's own.
        sql.raw(`explain execute plan_lookup('${plan?.id}', '${ctx.tenantId}')`),
      );
      await tx.execute(sql`deallocate plan_lookup`);
      return explained.map((row) => row["QUERY PLAN"]).join("\n");
    });
    expect(lines).toContain("research_plan_pkey");
    expect(lines).not.toContain("research_plan_tenant");
  });
});
