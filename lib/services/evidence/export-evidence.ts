/**
 * A plan's evidence as JSON for a reader outside Cairn (docs/evidence.md,
 * "Export"): every source with its content digest, and every claim with its
 * citations, whole. Bounded by the plan's total of evidence
 * (docs/evidence.md, "Limits"), so it is built whole rather than streamed.
 */
import "server-only";
import type { ServiceContext } from "../shared/context";
import { getPlan } from "../shared/plan-access";
import { loadWholePlanEvidence } from "./read-evidence";

export const EVIDENCE_EXPORT_FORMAT = "cairn-evidence/1";

export async function exportPlanEvidence(ctx: ServiceContext, planId: string) {
  return ctx.db.transaction(async (tx) => {
    const plan = await getPlan(tx, ctx, planId);
    const evidence = await loadWholePlanEvidence(tx, ctx, plan.id);
    return {
      format: EVIDENCE_EXPORT_FORMAT,
      planId: plan.id,
      planName: plan.name,
      researchQuestion: plan.researchQuestion,
      exportedAt: new Date().toISOString(),
      ...evidence,
    };
  });
}
