/**
 * A lookup of a tenant's row by its primary key reads the primary key
 * whatever the database knows of the table (`sameTenant`,
 * lib/db/same-tenant.ts, and its text form in the loop's statements,
 * `planOfTenant`). A statement's generic plan is made once and cached for as
 * long as its connection lives and the table's statistics do not change;
 * made while the table was small and never analysed, as on a new deployment,
 * it took the tenant's (tenant_id, ...) index, and kept reading every row of
 * the tenant through it on every call as they grew in number
 * (docs/performance.md). Here the generic plans of the lock the loop takes
 * on a plan and of an artifact's read by id, each made on a table of one row,
 * on PGlite and on PostgreSQL 15.
 */
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { sameTenant } from "@/lib/db/same-tenant";
import { researchArtifacts } from "@/lib/db/schema";
import { lockedPlanCte, PLAN_LOCK } from "@/lib/services/loop/plan-lock";
import type { ServiceContext } from "@/lib/services/shared/context";
import { BACKENDS, freshDatabase } from "./support/databases";
import { genericPlan } from "./support/generic-plan";
import { tenantContext } from "./support/in-process";
import { readRows } from "./support/rows";

describe.each(BACKENDS)("a lookup by id of a tenant's row on %s", (backend) => {
  let handle: DatabaseHandle;
  let ctx: ServiceContext;
  let planId: string;
  let artifactId: string;

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    ctx = await tenantContext(handle.db, "Lookup");
    const [plan] = await readRows<{ id: string }>(
      handle.db,
      sql`insert into research_plan (tenant_id, name, research_question)
        values (${ctx.tenantId}::uuid, 'The only plan', 'q') returning id`,
    );
    const [artifact] = await readRows<{ id: string }>(
      handle.db,
      sql`insert into research_artifact (tenant_id, artifact_type, title, content, content_text)
        values (${ctx.tenantId}::uuid, 'note', 'The only artifact', '{}'::jsonb, 'text')
        returning id`,
    );
    planId = plan?.id ?? "";
    artifactId = artifact?.id ?? "";
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("locks the loop's plan through the plan's primary key", async () => {
    const lines = await genericPlan(
      handle.db,
      `with ${lockedPlanCte("id, status", PLAN_LOCK.claim)} select id from plan`,
      [planId, ctx.tenantId],
    );
    expect(lines).toContain("research_plan_pkey");
    expect(lines).not.toContain("research_plan_tenant");
  });

  it("reads an artifact through the artifact's primary key", async () => {
    const query = handle.db
      .select({ id: researchArtifacts.id })
      .from(researchArtifacts)
      .where(
        and(
          eq(researchArtifacts.id, artifactId),
          sameTenant(researchArtifacts.tenantId, ctx.tenantId),
        ),
      )
      .toSQL();
    expect(query.params).toEqual([artifactId, ctx.tenantId]);
    const lines = await genericPlan(handle.db, query.sql, [artifactId, ctx.tenantId]);
    expect(lines).toContain("research_artifact_pkey");
    expect(lines).not.toContain("research_artifact_tenant");
  });
});
