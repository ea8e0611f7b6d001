/**
 * The head of a plan's audit chain (docs/audit.md): deleting a trail's newest
 * rows, its head or the whole plan shows in every check (Node's, the
 * database's for the plan page, and the export's); an untampered trail
 * verifies and its export checks without Cairn, also when streamed at
 * thousands of rows; concurrent writers of one plan still chain one after the
 * other. In process, on PGlite and on PostgreSQL 15; and on PostgreSQL, where
 * transactions run side by side, a writer of a plan's trail that does not hold
 * the plan's lock waits for one that holds it exclusively instead of
 * deadlocking with it.
 */
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import {
  CHAIN_PAGE_ROWS,
  checkPlanTrailInDatabase,
  verifyAllTrails,
  verifyPlanTrail,
} from "@/lib/services/audit/audit-chain";
import { exportAuditTrail } from "@/lib/services/audit/export-audit-trail";
import { writeAuditLog } from "@/lib/services/shared/audit";
import { lockPlan } from "@/lib/services/shared/plan-access";
import { getPlanPage } from "@/lib/services/views/plan-page";
import { expectExportChecks, readAuditExport, verifiedTrail } from "../support/audit-export";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";
import { readRows } from "../support/rows";

describe.each(BACKENDS)("the audit chain's head on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  /** A plan failed by a person's reject at its first step's review. */
  async function rejectedPlan() {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Rejected",
      researchQuestion: "q",
      steps: planSteps("search", "synthesize"),
    });
    const planId: string = created.planId;
    const next = await tenant.agent.ok("get_next_step", { planId });
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: next.step.stepId,
      summary: "Please check.",
    });
    const rejected = await tenant.agent.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "reject",
      feedback: "Wrong question.",
    });
    expect(rejected).toMatchObject({ planStatus: "failed" });
    return planId;
  }

  /** Node's check, the database's, and the plan page's, which must agree. */
  async function everyCheck(planId: string) {
    const { ctx } = tenant.agent;
    const node = await verifyPlanTrail(tenant.handle.db, planId);
    expect(await checkPlanTrailInDatabase(tenant.handle.db, planId, ctx.tenantId)).toEqual(node);
    expect(await (await getPlanPage(ctx, planId))?.trail).toEqual(node);
    return node;
  }

  it("names the newest rows deleted from a failed plan's trail, in every check", async () => {
    const planId = await rejectedPlan();
    const trail = await readAuditExport(tenant.agent.ctx, planId);
    // The reject's transaction signed the head: every row is signed.
    const length = trail.rows.length;
    expectExportChecks(trail, length);
    expect(await everyCheck(planId)).toEqual(verifiedTrail(planId, length, length));
    // The failing step's rows: the reject and the step's failure are the newest.
    expect(trail.rows.slice(-2).map((row) => row.payload.action ?? row.eventType)).toContain(
      "decision",
    );

    await tenant.handle.db.execute(
      sql`delete from plan_audit_log where plan_id = ${planId}::uuid
        and chain_index > ${length - 2}`,
    );
    const expected = {
      planId,
      rows: length - 2,
      verified: false,
      headMismatch: `rows ${length - 1} to ${length} are missing: the trail ends at row ${length - 2} but its head records ${length} (its newest rows were deleted)`,
    };
    expect(await everyCheck(planId)).toEqual(expected);
    expect((await tenant.agent.ok("get_plan_status", { planId })).status).toBe("failed");
    // The export carries the head, so an auditor sees the rows missing too.
    const shortened = await readAuditExport(tenant.agent.ctx, planId);
    expect(shortened.head).toEqual(trail.head);
    expect(shortened.rows).toHaveLength(length - 2);
    expect(shortened.verification).toEqual(expected);

    // The next row chains onto the head, not onto what is left: the gap stays.
    const [next] = await readRows<{ id: string; chainIndex: number }>(
      tenant.handle.db,
      sql`insert into plan_audit_log (tenant_id, plan_id, event_type, actor_type, actor_label)
        values (${tenant.agent.ctx.tenantId}::uuid, ${planId}::uuid, 'plan_modified', 'system', 'after')
        returning id, chain_index as "chainIndex"`,
    );
    expect(next?.chainIndex).toBe(length + 1);
    expect((await everyCheck(planId)).firstBadRow).toEqual({
      id: next?.id,
      position: length - 1,
      reason: `the row is link ${length + 1} where link ${length - 1} should be (a row before it is missing)`,
    });
  });

  it("shows a rewritten last row, a deleted head, and a deleted plan", async () => {
    const db = tenant.handle.db;
    // The last row rewritten with a digest recomputed to match: the chain holds, the head does not.
    const rewritten = await rejectedPlan();
    const last = sql`plan_id = ${rewritten}::uuid and chain_index =
      (select max(chain_index) from plan_audit_log where plan_id = ${rewritten}::uuid)`;
    await db.execute(sql`update plan_audit_log set actor_label = 'someone else' where ${last}`);
    await db.execute(
      sql`update plan_audit_log l set digest = encode(sha256(convert_to(
          coalesce(l.prev_digest, '') || audit_row_canonical(l), 'UTF8')), 'hex')
        where ${last}`,
    );
    const rows = (await verifyPlanTrail(db, rewritten)).rows;
    expect(await everyCheck(rewritten)).toEqual({
      planId: rewritten,
      rows,
      verified: false,
      headMismatch: `row ${rows} is not the last row its head records (the trail was rewritten)`,
    });

    // A row moved before the chain's first place is read, and named, too.
    const moved = await rejectedPlan();
    const [second] = await readRows<{ id: string }>(
      db,
      sql`update plan_audit_log set chain_index = 0
        where plan_id = ${moved}::uuid and chain_index = 2 returning id`,
    );
    const movedRow = {
      id: second?.id,
      position: 1,
      reason: "the row is link 0 where link 1 should be (a row before it is missing)",
    };
    expect((await everyCheck(moved)).firstBadRow).toEqual(movedRow);
    const movedExport = await readAuditExport(tenant.agent.ctx, moved);
    expect(movedExport.rows[0]?.id).toBe(second?.id);
    expect(movedExport.verification.firstBadRow).toEqual(movedRow);

    const headless = await rejectedPlan();
    await db.execute(sql`delete from plan_audit_head where plan_id = ${headless}::uuid`);
    expect((await everyCheck(headless)).headMismatch).toBe(
      "the trail has no head: the record of its length and last digest was deleted",
    );

    const deleted = await rejectedPlan();
    const length = (await verifyPlanTrail(db, deleted)).rows;
    await db.execute(sql`delete from research_plan where id = ${deleted}::uuid`);
    const all = await verifyAllTrails(db);
    expect(all.find((result) => result.planId === deleted)).toEqual({
      planId: deleted,
      rows: 0,
      verified: false,
      headMismatch: `the plan was deleted, and with it its trail of ${length} rows`,
    });
    expect(all.find((result) => result.planId === headless)?.verified).toBe(false);
  });

  it("streams an export of thousands of rows that parses and checks", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Long trail",
      researchQuestion: "q",
      steps: planSteps("search"),
    });
    const planId: string = created.planId;
    const { ctx } = tenant.agent;
    const added = CHAIN_PAGE_ROWS * 6 + 7;
    await tenant.handle.db.execute(
      sql`insert into plan_audit_log (tenant_id, plan_id, event_type, actor_type, actor_label, payload)
        select ${ctx.tenantId}::uuid, ${planId}::uuid, 'step_completed', 'system', 'bulk',
          jsonb_build_object('i', i, 'note', repeat('é', i % 7), 'n', i * 0.1)
        from generate_series(1, ${added}) i`,
    );
    const trail = await readAuditExport(ctx, planId);
    expect(trail.rows.length).toBeGreaterThan(added);
    // Written as it is read: the header, a piece per page of rows, the verdict.
    const reader = (await exportAuditTrail(ctx, planId)).body.getReader();
    let pieces = 0;
    while (!(await reader.read()).done) pieces += 1;
    expect(pieces).toBe(Math.ceil(trail.rows.length / CHAIN_PAGE_ROWS) + 2);
    expectExportChecks(trail);
    expect(await everyCheck(planId)).toEqual(verifiedTrail(planId, trail.rows.length, 0));
  });

  it("chains concurrent writers of one new plan one after the other", async () => {
    const db = tenant.handle.db;
    const { tenantId } = tenant.agent.ctx;
    const [plan] = await readRows<{ id: string }>(
      db,
      sql`insert into research_plan (id, tenant_id, name, research_question)
        values (${randomUUID()}::uuid, ${tenantId}::uuid, 'Racing', 'q') returning id`,
    );
    const planId = plan?.id ?? "";
    // Twelve writers, each its own transaction, the first rows of a plan without a head yet.
    await Promise.all(
      Array.from({ length: 12 }, (_, writer) =>
        db.transaction(async (tx) => {
          await tx.execute(
            sql`insert into plan_audit_log (tenant_id, plan_id, event_type, actor_type, actor_label, payload)
              values (${tenantId}::uuid, ${planId}::uuid, 'step_completed', 'system', 'racer',
                jsonb_build_object('writer', ${writer}::int))`,
          );
          await tx.execute(sql`select pg_sleep(0.01)`);
        }),
      ),
    );
    expect(await everyCheck(planId)).toEqual(verifiedTrail(planId, 12, 0));
    expectExportChecks(await readAuditExport(tenant.agent.ctx, planId));
  });

  it("moves the head once for each row it chains", async () => {
    const db = tenant.handle.db;
    const { tenantId } = tenant.agent.ctx;
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Versions",
      researchQuestion: "q",
      steps: planSteps("search"),
    });
    const updates = await db.transaction(async (tx) => {
      // The backend's count, which may still hold earlier transactions' not
      // yet sent to the statistics: the difference is this transaction's.
      const headUpdates = async () =>
        (
          await readRows<{ updates: number }>(
            tx,
            sql`select n_tup_upd::int as updates from pg_stat_xact_user_tables
              where relname = 'plan_audit_head'`,
          )
        )[0]?.updates ?? 0;
      const before = await headUpdates();
      for (let row = 0; row < 5; row += 1) {
        await tx.execute(
          sql`insert into plan_audit_log (tenant_id, plan_id, event_type, actor_type, actor_label, payload)
            values (${tenantId}::uuid, ${planId}::uuid, 'step_completed', 'system', 'writer',
              jsonb_build_object('row', ${row}::int))`,
        );
      }
      return (await headUpdates()) - before;
    });
    // One new version of the head per row (two before drizzle/0029), each
    // one a later update of the head steps over until the transaction ends.
    expect(updates).toBe(5);
    expect(await everyCheck(planId)).toEqual(verifiedTrail(planId, 6, 0));
  });
});

describe("writers of one plan's trail on PostgreSQL", () => {
  const tenant = useFreshTenant("postgres");

  it("queues a writer without the plan's lock behind one that holds it, with no deadlock", async () => {
    const { ctx } = tenant.agent;
    const db = tenant.handle.db;
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Locked",
      researchQuestion: "q",
      steps: planSteps("search"),
    });
    let resumed: Promise<unknown> = Promise.resolve();
    await db.transaction(async (tx) => {
      // As a change (and the stall check) does: the plan's row, then its trail.
      await lockPlan(tx, ctx, planId);
      // get_research_context writes its session_resumed row without the plan's lock.
      resumed = tenant.agent.ok("get_research_context", { planId });
      await expect
        .poll(
          async () =>
            (
              await readRows<{ waiting: boolean }>(
                db,
                sql`select exists (select 1 from pg_locks where not granted) as waiting`,
              )
            )[0]?.waiting,
          { timeout: 5_000, interval: 20 },
        )
        .toBe(true);
      await writeAuditLog(tx, ctx, {
        eventType: "session_resumed",
        planId,
        payload: { sessionId: null },
      });
    });
    await expect(resumed).resolves.toMatchObject({ plan: { planId } });
    expect(await verifyPlanTrail(db, planId)).toMatchObject({ verified: true });
  });
});
