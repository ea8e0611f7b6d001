/**
 * Every row of a plan's trail has its place in the chain and its digest
 * (migration 0020, `plan_audit_log_chained`): the database refuses a row of a
 * plan without them, while a row of no plan (a skill run's) keeps none. The
 * migration adds the check as a validated constraint, or NOT VALID where rows
 * of a plan already lie outside their chain, which it leaves for verify-audit
 * to report. In process, on PGlite and on PostgreSQL 15.
 */
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { verifyPlanTrail } from "@/lib/services/audit/audit-chain";
import { writeAuditLog } from "@/lib/services/shared/audit";
import { addChainedCheck, dropChainedCheck } from "../support/audit-chained";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, tenantContext, useFreshTenant } from "../support/in-process";
import { readRows } from "../support/rows";

/** The error a statement fails with, as text with its cause (drivers wrap the database's). */
async function failure(statement: Promise<unknown>): Promise<string> {
  return statement.then(
    () => expect.fail("the statement should have been refused"),
    (error: unknown) => {
      const cause = error instanceof Error ? error.cause : undefined;
      return `${String(error)} ${cause instanceof Error ? cause.message : String(cause)}`;
    },
  );
}

describe.each(BACKENDS)("the audit chain's rows on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  const createPlan = async (name: string): Promise<string> =>
    (
      await tenant.agent.ok("create_research_plan", {
        name,
        researchQuestion: "q",
        steps: planSteps("search"),
      })
    ).planId;

  /** Whether the check is there, and whether it holds for every row (validated) or new ones only. */
  const check = async () =>
    readRows<{ validated: boolean }>(
      tenant.handle.db,
      sql`select convalidated as validated from pg_constraint where conname = 'plan_audit_log_chained'`,
    );

  it("refuses a row of a plan taken out of its chain, and keeps rows of no plan unchained", async () => {
    const { db } = tenant.handle;
    const planId = await createPlan("Chained");
    expect(await check()).toEqual([{ validated: true }]);
    for (const change of [sql`chain_index = null`, sql`digest = null`]) {
      expect(
        await failure(
          db.execute(sql`update plan_audit_log set ${change} where plan_id = ${planId}::uuid`),
        ),
      ).toMatch(/plan_audit_log_chained/);
    }
    // A skill run's row, as log_skill_execution writes one before any plan exists.
    await db.transaction((tx) =>
      writeAuditLog(tx, tenant.agent.ctx, {
        eventType: "skill_started",
        planId: null,
        payload: {
          executionId: randomUUID(),
          skillName: "research",
          status: "started",
          sessionId: null,
          researchType: null,
          delegatedTo: null,
        },
      }),
    );
    const unplanned = await readRows<{ chainIndex: number | null; digest: string | null }>(
      db,
      sql`select chain_index as "chainIndex", digest from plan_audit_log
        where tenant_id = ${tenant.agent.ctx.tenantId}::uuid and plan_id is null`,
    );
    expect(unplanned.length).toBeGreaterThan(0);
    expect(unplanned.every((row) => row.chainIndex === null && row.digest === null)).toBe(true);
    expect((await verifyPlanTrail(db, planId)).verified).toBe(true);
  });

  it("holds a row of a plan to its plan's tenant and a row of no plan to its tenant, and a team's deletion takes both", async () => {
    const { db } = tenant.handle;
    const alpha = tenant.agent.ctx.tenantId;
    const planId = await createPlan("Alpha's");
    const beta = await tenantContext(db, "Beta");
    // A row as the services write one (lib/services/shared/audit.ts), of `plan` and `team`.
    const row = (team: string, plan: string | null) =>
      db.execute(sql`insert into plan_audit_log
        (tenant_id, plan_id, event_type, actor_type, actor_label, payload)
        values (${team}::uuid, ${plan}::uuid, 'session_resumed', 'system', 'test', '{}'::jsonb)`);
    const rowsOf = async (team: string) =>
      (
        await readRows<{ n: number }>(
          db,
          sql`select count(*)::int as n from plan_audit_log where tenant_id = ${team}::uuid`,
        )
      )[0]?.n ?? 0;
    const before = await rowsOf(alpha);
    // Another team's row on this plan, and a row of no plan of a team that does not exist.
    expect(await failure(row(beta.tenantId, planId))).toMatch(/not the plan's tenant/);
    expect(await failure(row(randomUUID(), null))).toMatch(/tenant_without_plan/);
    expect(await rowsOf(alpha)).toBe(before);
    // Its own rows pass, and the trail still verifies.
    await row(alpha, planId);
    await row(alpha, null);
    expect((await verifyPlanTrail(db, planId)).verified).toBe(true);
    // Beta's plan and a row of no plan of Beta's go with Beta.
    const betaPlan = await inProcessAgent(beta).ok("create_research_plan", {
      name: "Beta's",
      researchQuestion: "q",
      steps: planSteps("search"),
    });
    await row(beta.tenantId, null);
    expect(await rowsOf(beta.tenantId)).toBeGreaterThan(1);
    await db.execute(sql`delete from tenant where id = ${beta.tenantId}::uuid`);
    expect(await rowsOf(beta.tenantId)).toBe(0);
    expect(
      await readRows(db, sql`select 1 from research_plan where id = ${betaPlan.planId}::uuid`),
    ).toEqual([]);
    expect(await rowsOf(alpha)).toBe(before + 2);
  });

  it("is added NOT VALID over rows already outside their chain, which verify-audit still reports", async () => {
    const { db } = tenant.handle;
    const planId = await createPlan("Tampered before");
    await dropChainedCheck(db);
    await db.execute(
      sql`update plan_audit_log set chain_index = null where plan_id = ${planId}::uuid`,
    );
    await addChainedCheck(db);
    expect(await check()).toEqual([{ validated: false }]);
    expect((await verifyPlanTrail(db, planId)).firstBadRow?.reason).toBe(
      "the row has no place in the chain",
    );
    // New rows are held to it all the same.
    const other = await createPlan("After");
    expect(
      await failure(
        db.execute(sql`update plan_audit_log set digest = null where plan_id = ${other}::uuid`),
      ),
    ).toMatch(/plan_audit_log_chained/);
  });
});
