/**
 * get_step_context: the step asked about, a page of the results before it,
 * the plan's evidence and a page of its artifacts (docs/execution-loop.md,
 * "Reading a plan back"); the step's lease renewed.
 */
import "server-only";
import { z } from "zod";
import { isTerminalPlanStatus } from "../../plan-engine/transitions";
import { loadPlanEvidence, planEvidenceOutput } from "../evidence/read-evidence";
import { renewLease } from "../loop/leases";
import type { ServiceContext } from "../shared/context";
import { planIdField, stepIdField } from "../shared/fields";
import { nextCursorField } from "../shared/pagination";
import { getPlan, getStep, stepNotFound } from "../shared/plan-access";
import { parseInput } from "../shared/validation";
import { loadContextStep, loadPriorStepPage } from "./context-pages";
import { artifactPage } from "./plan-artifacts";
import {
  artifactsCursorField,
  artifactsLimitField,
  contextArtifact,
  contextStep,
  stepsCursorField,
} from "./research-context";

export const getStepContextInput = z.object({
  planId: planIdField,
  stepId: stepIdField,
  artifactsCursor: artifactsCursorField,
  artifactsLimit: artifactsLimitField,
  stepsCursor: stepsCursorField,
});

/** get_step_context's answer (the MCP tool's output schema). */
export const stepContextOutput = z.object({
  planId: z.string(),
  researchQuestion: z.string(),
  step: contextStep,
  leaseExpiresAt: z.string().nullable(),
  priorSteps: z.array(contextStep),
  stepsNextCursor: z.string().nullable(),
  evidence: planEvidenceOutput,
  artifacts: z.array(contextArtifact),
  artifactsTotal: z.number().int(),
  /** Passed back as artifactsCursor for the next page; null on the last. */
  artifactsNextCursor: nextCursorField,
});

export type StepContext = z.infer<typeof stepContextOutput>;

export async function getStepContext(
  ctx: ServiceContext,
  raw: z.input<typeof getStepContextInput>,
): Promise<StepContext> {
  const input = parseInput(getStepContextInput, raw);
  return ctx.db.transaction(async (tx) => {
    const plan = await getPlan(tx, ctx, input.planId);
    const step = await getStep(tx, ctx, plan.id, input.stepId);
    // An ended plan (a cancelled one above all) holds no step: nothing to renew.
    const leaseExpiresAt = isTerminalPlanStatus(plan.status)
      ? null
      : await renewLease(tx, ctx, plan.id, step.id);
    const view = await loadContextStep(tx, ctx, plan.id, step.id);
    if (!view) throw stepNotFound(plan.id, step.id);
    return {
      planId: plan.id,
      researchQuestion: plan.researchQuestion,
      step: view,
      /** The step's lease, renewed by this call; null when the step is not in progress. */
      leaseExpiresAt,
      ...(await loadPriorStepPage(tx, ctx, plan.id, step.stepOrder, input.stepsCursor)),
      evidence: await loadPlanEvidence(tx, ctx, plan.id),
      ...(await artifactPage(tx, ctx, plan.id, {
        cursor: input.artifactsCursor,
        limit: input.artifactsLimit,
      })),
    };
  });
}
