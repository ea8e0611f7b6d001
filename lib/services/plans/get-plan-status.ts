/**
 * get_plan_status: progress, stall warnings and the plan's status. A step whose
 * holder stopped renewing its lease (CAIRN_STALL_THRESHOLD_SECONDS, default
 * 1800 s) is a warning; the scheduler marks such a plan `stalled` as Cairn
 * (`markStalledPlans`), and this call does the same for its one plan first, so
 * its answer never lags the scheduler. get_next_step later resumes the plan.
 */

import "server-only";
import { z } from "zod";
import { computeProgress, stallWarnings } from "../../plan-engine/progress";
import { readPlanStatus } from "../loop/read-plan-status";
import { applyDueReviewsOfPlan } from "../reviews/deadline-state";
import type { ServiceContext } from "../shared/context";
import { planIdField } from "../shared/fields";
import {
  cancellationOutput,
  pauseReasonOutput,
  planStatus,
  progress,
  stallWarning,
  stepStatus,
  stepType,
} from "../shared/output-fields";
import { planNotFound } from "../shared/plan-access";
import { parseInput } from "../shared/validation";
import { forkLinksOutput } from "./fork-links";
import { markStalledPlans, stallClock } from "./mark-stalled-plans";

export const getPlanStatusInput = z.object({ planId: planIdField });

/** The answer: the plan's status, progress, stall warnings and pause reason (the MCP tool's output schema). */
export const planStatusOutput = z.object({
  planId: z.string(),
  name: z.string(),
  status: planStatus,
  progress,
  stallWarnings: z.array(stallWarning),
  stallThresholdSeconds: z.number(),
  pauseReason: pauseReasonOutput.nullable(),
  /** Set when the plan was cancelled: who, when and why. */
  cancellation: cancellationOutput.nullable(),
  steps: z.array(
    z.object({ stepId: z.string(), stepOrder: z.number(), stepType, status: stepStatus }),
  ),
  updatedAt: z.string(),
  ...forkLinksOutput.shape,
});

export type PlanStatusReport = z.infer<typeof planStatusOutput>;

export async function getPlanStatus(
  ctx: ServiceContext,
  raw: z.input<typeof getPlanStatusInput>,
): Promise<PlanStatusReport> {
  return (await statusWithSteps(ctx, raw)).report;
}

/**
 * The answer, and the steps as read (a step in progress with its times and
 * lease, the others without: `readPlanStatus`), for a reader that shows more
 * of them than the answer does: the plan card tells a sent-back step.
 */
export async function statusWithSteps(
  ctx: ServiceContext,
  raw: z.input<typeof getPlanStatusInput>,
) {
  const { planId } = parseInput(getPlanStatusInput, raw);
  const read = async () => {
    const row = await readPlanStatus(ctx.db, ctx, planId);
    if (!row) throw planNotFound(planId);
    return row;
  };
  // The read reports a due review; only then is it applied and the plan read again.
  let plan = await read();
  if (plan.reviewDue) {
    await applyDueReviewsOfPlan(ctx, planId);
    plan = await read();
  }
  const now = new Date();
  if (plan.status === "executing" && stallWarnings(plan.steps, now, stallClock(ctx)).length > 0) {
    // Marked as Cairn, as the scheduler would; then read again, as someone may have moved it meanwhile.
    await markStalledPlans(ctx.db, ctx, { planId, tenantId: ctx.tenantId });
    plan = await read();
  }
  const { steps } = plan;
  const warnings = stallWarnings(steps, now, stallClock(ctx));

  const report: PlanStatusReport = {
    planId: plan.id,
    name: plan.name,
    status: plan.status,
    progress: computeProgress(steps.map((s) => s.status)),
    stallWarnings: warnings,
    stallThresholdSeconds: ctx.stallThresholdSeconds,
    /** Why the plan's server-run steps stopped, and the call that unblocks them. */
    pauseReason: plan.pauseReason,
    cancellation: plan.cancellation,
    steps: steps.map((s) => ({
      stepId: s.id,
      stepOrder: s.stepOrder,
      stepType: s.stepType,
      status: s.status,
    })),
    updatedAt: plan.updatedAt,
    forkedFrom: plan.forkedFrom,
    forks: plan.forks,
  };
  return { report, steps };
}
