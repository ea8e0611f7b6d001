/**
 * The signed head of a plan's audit chain (docs/audit.md, "Signed heads"):
 * with SQL alone, but without Cairn's key, a decision appended after the
 * signed head, a row changed or deleted with every digest and the head
 * recomputed to match, or a forged signature is reported by every check
 * (Node's for verify-audit, the database's for the plan page, the export's),
 * and the scheduler's signing will not sign over it; rows written since the
 * last signature are reported as not signed yet until a pass signs them; a
 * signature made with a key rotated out verifies while that key is listed as
 * previous, and the next pass signs again with the current key; a trail the
 * migration found is marked, not failed. In process, on PGlite and PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { checkPlanTrailInDatabase, verifyPlanTrail } from "@/lib/services/audit/audit-chain";
import {
  type AuditKeyring,
  auditKeyFromSecret,
  auditKeyring,
  signHead,
} from "@/lib/services/audit/audit-key";
import { trailFailure, trailSigning } from "@/lib/services/audit/chain-verifier";
import { type SigningPass, signGrownHeads } from "@/lib/services/audit/sign-heads";
import type { ServiceContext } from "@/lib/services/shared/context";
import { getPlanPage } from "@/lib/services/views/plan-page";
import { readAuditExport, verifiedTrail } from "../support/audit-export";
import { BACKENDS } from "../support/databases";
import {
  type InProcessAgent,
  inProcessAgent,
  planSteps,
  signedInAdmin,
  useFreshTenant,
} from "../support/in-process";
import { readRows } from "../support/rows";

const DECISION_AFTER_SIGNED_HEAD =
  "is a decision after the last signed head: Cairn signs the head in every decision's transaction, so it was written outside Cairn";

describe.each(BACKENDS)("the signed head of a plan's audit trail on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const as = {} as {
    person: InProcessAgent;
    personCtx: ServiceContext & { actor: { id: string } };
  };

  beforeAll(async () => {
    as.personCtx = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
    as.person = inProcessAgent(as.personCtx);
  });

  /** Step 1 approved by a person at its review (the decision signs the head), step 2 handed out. */
  async function planPastDecision(steps = planSteps("search", "analyze", "synthesize")) {
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Signed",
      researchQuestion: "q",
      steps,
    });
    const first = await tenant.agent.ok("get_next_step", { planId });
    await approvedAtReview(planId, first.step.stepId);
    return { planId: planId as string, firstStepId: first.step.stepId as string };
  }

  /** The step handed out put up for review, and a person's approve of it. */
  async function approvedAtReview(planId: string, stepId: string) {
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "Please check.",
      proposedResult: { findings: "ok" },
    });
    await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
  }

  /** The scheduler's passes, from the first plan round to it again; the plans refused. */
  async function signEveryHead(options: { keyring?: AuditKeyring; limit?: number } = {}) {
    const refused: SigningPass["refused"] = [];
    let after: string | null = null;
    do {
      const pass: SigningPass = await signGrownHeads(tenant.handle.db, { ...options, after });
      refused.push(...pass.refused);
      after = pass.after;
    } while (after);
    return refused;
  }

  /** Node's check (verify-audit), the database's (the plan page) and the export's, which must agree. */
  async function everyCheck(planId: string, keyring?: AuditKeyring) {
    const db = tenant.handle.db;
    const node = await verifyPlanTrail(db, planId, undefined, keyring);
    expect(await checkPlanTrailInDatabase(db, planId, tenant.agent.ctx.tenantId, keyring)).toEqual(
      node,
    );
    if (!keyring) {
      expect(await (await getPlanPage(as.personCtx, planId))?.trail).toEqual(node);
      expect((await readAuditExport(as.personCtx, planId)).verification).toEqual(node);
    }
    return node;
  }

  async function trailLength(planId: string): Promise<number> {
    const [row] = await readRows<{ n: number }>(
      tenant.handle.db,
      sql`select count(*)::int as n from plan_audit_log where plan_id = ${planId}::uuid`,
    );
    return row?.n ?? 0;
  }

  /**
   * The rows from `from` on moved to places from `to` on, linked again, and the
   * head moved to match, as someone with SQL could.
   */
  async function rechain(planId: string, from: number, to = from) {
    const db = tenant.handle.db;
    const rows = await readRows<{ id: string }>(
      db,
      sql`select id from plan_audit_log where plan_id = ${planId}::uuid and chain_index >= ${from}
        order by chain_index`,
    );
    const [before] = await readRows<{ digest: string | null }>(
      db,
      sql`select digest from plan_audit_log where plan_id = ${planId}::uuid
        and chain_index = ${to - 1}`,
    );
    let previous = before?.digest ?? null;
    let index = to;
    for (const row of rows) {
      // The canonical text holds chain_index: the digest is computed once the row has its new place.
      await db.execute(
        sql`update plan_audit_log set chain_index = ${index}, prev_digest = ${previous}::text
          where id = ${row.id}::uuid`,
      );
      const [updated] = await readRows<{ digest: string }>(
        db,
        sql`update plan_audit_log l set digest = encode(sha256(convert_to(
            coalesce(l.prev_digest, '') || audit_row_canonical(l), 'UTF8')), 'hex')
          where id = ${row.id}::uuid returning digest`,
      );
      previous = updated?.digest ?? null;
      index += 1;
    }
    await db.execute(
      sql`update plan_audit_head set chain_length = ${index - 1}, last_digest = ${previous}
        where plan_id = ${planId}::uuid`,
    );
  }

  /** A person's approve, over the web, appended with plain SQL. */
  async function forgedDecision(planId: string, stepId: string) {
    const [row] = await readRows<{ id: string; chainIndex: number }>(
      tenant.handle.db,
      sql`insert into plan_audit_log (tenant_id, plan_id, step_id, event_type, actor_type,
          actor_id, actor_label, payload)
        values (${tenant.agent.ctx.tenantId}::uuid, ${planId}::uuid, ${stepId}::uuid,
          'user_reviewed', 'user', ${as.personCtx.actor.id}::uuid, 'Ada',
          ${JSON.stringify({
            action: "decision",
            reviewRequestId: stepId,
            decision: "approve",
            feedback: null,
            channel: "web",
            reviewDigest: "0".repeat(64),
            decisionPolicy: "people_only",
          })}::jsonb)
        returning id, chain_index as "chainIndex"`,
    );
    if (!row) throw new Error("the forged row was not written");
    return row;
  }

  it("signs at the decision; rows since are not signed yet until the scheduler's pass signs them", async () => {
    const { planId } = await planPastDecision();
    const signed = await trailLength(planId);
    expect(await everyCheck(planId)).toEqual(verifiedTrail(planId, signed, signed));

    // The agent's next step: the loop's writes, which sign nothing.
    const next = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, next.step.stepId);
    const rows = await trailLength(planId);
    expect(rows).toBeGreaterThan(signed);
    const unsigned = await everyCheck(planId);
    expect(unsigned).toEqual(verifiedTrail(planId, rows, signed));
    expect(trailSigning(unsigned)).toBe(
      `rows 1 to ${signed} signed with key ${auditKeyring().current.id}, rows ${signed + 1} to ${rows} not signed yet`,
    );

    // The scheduler's pass, in pages: every grown trail signed, this one among them.
    expect(await signEveryHead({ limit: 2 })).toEqual([]);
    expect(await everyCheck(planId)).toEqual(verifiedTrail(planId, rows, rows));
    // Nothing grew: the next pass has nothing of this plan to sign.
    const again = await signGrownHeads(tenant.handle.db);
    expect(again).toEqual({ signed: 0, refused: [], after: null });
  });

  it("fails a decision appended with plain SQL after the signed head, and signs nothing over it", async () => {
    const { planId, firstStepId } = await planPastDecision();
    const forged = await forgedDecision(planId, firstStepId);
    const failed = {
      planId,
      rows: forged.chainIndex,
      verified: false,
      signatureFailure: `row ${forged.chainIndex} (${forged.id}) ${DECISION_AFTER_SIGNED_HEAD}`,
    };
    expect(await everyCheck(planId)).toEqual(failed);
    expect(trailFailure(failed)).toBe(failed.signatureFailure);

    // The scheduler's pass refuses it, and a later real decision does not sign over it either.
    const pass = await signGrownHeads(tenant.handle.db);
    expect(pass.refused).toContainEqual({ planId, reason: failed.signatureFailure });
    const next = await tenant.agent.ok("get_next_step", { planId });
    await approvedAtReview(planId, next.step.stepId);
    expect(await everyCheck(planId)).toEqual({ ...failed, rows: await trailLength(planId) });

    // A trail whose signature was deleted too still names the forged decision.
    const other = await planPastDecision();
    const second = await forgedDecision(other.planId, other.firstStepId);
    await tenant.handle.db.execute(
      sql`delete from plan_audit_signature where plan_id = ${other.planId}::uuid`,
    );
    const unsignedDecision = (await everyCheck(other.planId)).signatureFailure;
    expect(unsignedDecision).toMatch(/^row \d+ \(.+\) is a decision after the last signed head/);
    expect(unsignedDecision).not.toContain(second.id);
  });

  it("fails a row changed, or deleted, before the signed head with every digest and the head recomputed", async () => {
    const changed = await planPastDecision();
    const length = await trailLength(changed.planId);
    await tenant.handle.db.execute(
      sql`update plan_audit_log set actor_label = 'someone else'
        where plan_id = ${changed.planId}::uuid and chain_index = 2`,
    );
    await rechain(changed.planId, 2);
    expect(await everyCheck(changed.planId)).toEqual({
      planId: changed.planId,
      rows: length,
      verified: false,
      signatureFailure: `row ${length} is not the row its signature covers (the trail was rewritten up to its signed head)`,
    });
    // Its trail grows; the scheduler's pass will not sign over the rewrite.
    const next = await tenant.agent.ok("get_next_step", { planId: changed.planId });
    await tenant.agent.submit(changed.planId, next.step.stepId);
    expect((await signGrownHeads(tenant.handle.db)).refused.map((r) => r.planId)).toContain(
      changed.planId,
    );
    expect((await everyCheck(changed.planId)).signatureFailure).toBe(
      `row ${length} is not the row its signature covers (the trail was rewritten up to its signed head)`,
    );

    const deleted = await planPastDecision();
    const rows = await trailLength(deleted.planId);
    await tenant.handle.db.execute(
      sql`delete from plan_audit_log where plan_id = ${deleted.planId}::uuid and chain_index = 2`,
    );
    await rechain(deleted.planId, 3, 2);
    expect(await everyCheck(deleted.planId)).toEqual({
      planId: deleted.planId,
      rows: rows - 1,
      verified: false,
      signatureFailure: `the head signed at row ${rows} is gone: the trail has no row ${rows} (signed rows were deleted)`,
    });
  });

  it("verifies a signature by a key rotated out while it is listed as previous, and fails a wrong key", async () => {
    const { planId } = await planPastDecision();
    const rows = await trailLength(planId);
    const tests = auditKeyring();
    const rotated: AuditKeyring = {
      current: auditKeyFromSecret("the-next-audit-key-the-next-audit-key"),
      previous: [tests.current],
    };
    expect(await everyCheck(planId, rotated)).toEqual(verifiedTrail(planId, rows, rows));
    const dropped: AuditKeyring = { current: rotated.current, previous: [] };
    expect(await everyCheck(planId, dropped)).toEqual({
      planId,
      rows,
      verified: false,
      signatureFailure: `the head signed at row ${rows} names key ${tests.current.id}, which Cairn does not hold (a key rotated out must stay in CAIRN_AUDIT_PREVIOUS_KEYS until every head is signed again)`,
    });

    // The rotated key's passes sign every head again, so the old key can go.
    await signEveryHead({ keyring: rotated });
    expect(await everyCheck(planId, dropped)).toEqual({
      planId,
      rows,
      verified: true,
      signedRows: rows,
      keyId: rotated.current.id,
    });

    // A signature made with any other key, under the current key's id, does not verify.
    const [head] = await readRows<{ tenantId: string; digest: string }>(
      tenant.handle.db,
      sql`select tenant_id as "tenantId", last_digest as digest from plan_audit_head
        where plan_id = ${planId}::uuid`,
    );
    const wrong = signHead(
      {
        current: { id: rotated.current.id, key: Buffer.from("not-cairns-key-not-cairns-key-00") },
        previous: [],
      },
      { tenantId: head?.tenantId ?? "", planId, chainLength: rows, headDigest: head?.digest ?? "" },
    );
    await tenant.handle.db.execute(
      sql`update plan_audit_signature set signature = ${wrong.signature}
        where plan_id = ${planId}::uuid`,
    );
    expect(await everyCheck(planId, dropped)).toEqual({
      planId,
      rows,
      verified: false,
      signatureFailure: `the signature of the head at row ${rows} does not verify: it was not made with Cairn's key`,
    });
  });

  it("signs decisions of many plans while signing passes run beside them, every trail verifying", async () => {
    const plans = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const { planId } = await tenant.agent.ok("create_research_plan", {
          name: "Side by side",
          researchQuestion: "q",
          steps: planSteps("search", "synthesize"),
        });
        const first = await tenant.agent.ok("get_next_step", { planId });
        await tenant.agent.submit(planId, first.step.stepId);
        const second = await tenant.agent.ok("get_next_step", { planId });
        return { planId: planId as string, stepId: second.step.stepId as string };
      }),
    );
    // On PostgreSQL these run side by side: a pass takes no lock a decision holds first.
    await Promise.all([
      ...plans.map((plan) => approvedAtReview(plan.planId, plan.stepId)),
      signEveryHead(),
      signEveryHead({ limit: 1 }),
    ]);
    for (const { planId } of plans) {
      const rows = await trailLength(planId);
      expect(await everyCheck(planId)).toEqual(verifiedTrail(planId, rows, rows));
    }
  });

  it("reports a trail the migration marked as not signed yet, and the next pass signs it", async () => {
    const { planId } = await planPastDecision();
    const rows = await trailLength(planId);
    // What drizzle/0015_audit_signature.sql wrote for a trail it found.
    await tenant.handle.db.execute(
      sql`delete from plan_audit_signature where plan_id = ${planId}::uuid`,
    );
    await tenant.handle.db.execute(
      sql`insert into plan_audit_signature (plan_id, tenant_id, chain_length, head_digest)
        select plan_id, tenant_id, chain_length, last_digest from plan_audit_head
        where plan_id = ${planId}::uuid`,
    );
    const marked = await everyCheck(planId);
    expect(marked).toEqual(verifiedTrail(planId, rows, 0));
    expect(trailSigning(marked)).toBe("not signed yet");
    // (The plans the tests above tampered with, or signed with another key, are refused.)
    expect((await signEveryHead()).map((refused) => refused.planId)).not.toContain(planId);
    expect(await everyCheck(planId)).toEqual(verifiedTrail(planId, rows, rows));
  });
});
