/**
 * add_step_evidence (docs/evidence.md): sources and claims for a step already
 * completed, written with their `evidence_recorded` audit row in one
 * transaction. A step still open gets its evidence with its result.
 */
import "server-only";
import { z } from "zod";
import { AppError } from "../../plan-engine/app-error";
import type { ServiceContext } from "../shared/context";
import { planIdField, stepIdField } from "../shared/fields";
import { lockPlanForWork, lockStep } from "../shared/plan-access";
import { parseInput } from "../shared/validation";
import { evidenceInput, recordEvidence, recordedEvidenceOutput } from "./record-evidence";

export const addStepEvidenceInput = z.object({
  planId: planIdField,
  stepId: stepIdField,
  evidence: evidenceInput,
});

export const addedStepEvidenceOutput = z.object({
  planId: z.string(),
  stepId: z.string(),
  evidence: recordedEvidenceOutput,
});

export type AddedStepEvidence = z.infer<typeof addedStepEvidenceOutput>;

export async function addStepEvidence(
  ctx: ServiceContext,
  raw: z.input<typeof addStepEvidenceInput>,
): Promise<AddedStepEvidence> {
  const input = parseInput(addStepEvidenceInput, raw);
  if (!input.evidence.sources?.length && !input.evidence.claims?.length) {
    throw new AppError("VALIDATION_ERROR", "evidence: give at least one source or claim to add.");
  }
  return ctx.db.transaction(async (tx) => {
    // The plan's lock, then the step's, in submit_step_result's order: the
    // plan's orders two changes of its evidence (recordEvidence), so its
    // limits hold however many additions run at once.
    const { plan } = await lockPlanForWork(tx, ctx, input.planId, "evidence", input.stepId);
    const step = await lockStep(tx, ctx, plan.id, input.stepId);
    if (step.status !== "completed") {
      throw new AppError(
        "INVALID_TRANSITION",
        `Step ${step.stepOrder} is ${step.status}: evidence is added only to a completed step. Send it with the step's result (submit_step_result's evidence) instead.`,
        { stepStatus: step.status },
      );
    }
    const evidence = await recordEvidence(tx, ctx, {
      planId: input.planId,
      stepId: step.id,
      stepOrder: step.stepOrder,
      origin: "added",
      fetched: [],
      evidence: input.evidence,
      now: new Date().toISOString(),
    });
    return { planId: input.planId, stepId: step.id, evidence };
  });
}
