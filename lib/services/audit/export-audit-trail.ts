/**
 * A plan's audit trail as JSON, with its hash chain, for an auditor to check
 * without Cairn: each row's canonical text (what its digest covers), its
 * digest and the digest of the row before it. docs/audit.md says how to check.
 */
import "server-only";
import { and, asc, eq } from "drizzle-orm";
import { planAuditLog } from "../../db/schema";
import type { ServiceContext } from "../shared/context";
import { getPlan } from "../shared/plan-access";
import { loadChain, verifyChain } from "./audit-chain";

export const AUDIT_EXPORT_FORMAT = "cairn-audit-trail/1";

export async function exportAuditTrail(ctx: ServiceContext, planId: string) {
  return ctx.db.transaction(async (tx) => {
    const plan = await getPlan(tx, ctx, planId);
    const chain = await loadChain(tx, plan.id, ctx.tenantId);
    const rows = await tx
      .select()
      .from(planAuditLog)
      .where(and(eq(planAuditLog.planId, plan.id), eq(planAuditLog.tenantId, ctx.tenantId)))
      .orderBy(asc(planAuditLog.seq));
    const byId = new Map(rows.map((row) => [row.id, row]));
    return {
      format: AUDIT_EXPORT_FORMAT,
      planId: plan.id,
      planName: plan.name,
      exportedAt: new Date().toISOString(),
      algorithm:
        "digest = hex(sha256(utf8(prevDigest ?? '' + canonical))); rows in chainIndex order, each prevDigest equal to the digest before it (null for the first). canonical is a JSON array: [chainIndex, tenantId, planId, stepId, eventType, actorType, actorId, actorLabel, createdAt (UTC, microseconds), payload].",
      verification: verifyChain(plan.id, chain),
      rows: chain.map((link) => {
        const row = byId.get(link.id);
        return {
          id: link.id,
          chainIndex: link.chainIndex,
          eventType: row?.eventType ?? null,
          actorType: row?.actorType ?? null,
          actorLabel: row?.actorLabel ?? null,
          createdAt: row?.createdAt.toISOString() ?? null,
          payload: row?.payload ?? null,
          canonical: link.canonical,
          prevDigest: link.prevDigest,
          digest: link.digest,
        };
      }),
    };
  });
}
