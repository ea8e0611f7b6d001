/**
 * get_plan_status: progress, stall warnings and the plan's status. The stall
 * threshold is CAIRN_STALL_THRESHOLD_SECONDS (default 1800 s); a step in progress
 * longer than that is a warning, and an `executing` plan with such a step moves
 * to `stalled` here (with its audit row), which get_next_step later resumes.
 */

import "server-only";
import { z } from "zod";
import { computeProgress, stallWarnings } from "../../plan-engine/progress";
import { settleDeadlinesOfPlan } from "../reviews/review-deadlines";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { planIdField } from "../shared/fields";
import {
  pauseReasonOutput,
  planStatus,
  progress,
  stallWarning,
  stepStatus,
  stepType,
} from "../shared/output-fields";
import { getPlan, loadStepSummaries, lockPlan, setPlanStatus } from "../shared/plan-access";
import { parseInput } from "../shared/validation";

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
  steps: z.array(
    z.object({ stepId: z.string(), stepOrder: z.number(), stepType, status: stepStatus }),
  ),
  updatedAt: z.string(),
});

export type PlanStatusReport = z.infer<typeof planStatusOutput>;

export async function getPlanStatus(
  ctx: ServiceContext,
  raw: z.input<typeof getPlanStatusInput>,
): Promise<PlanStatusReport> {
  const { planId } = parseInput(getPlanStatusInput, raw);
  await settleDeadlinesOfPlan(ctx, planId);
  const now = new Date();
  // Both reads at once: they never waited for each other (no transaction), and
  // the steps are read without their results, which a status report never shows.
  let [plan, steps] = await Promise.all([
    getPlan(ctx.db, ctx, planId),
    loadStepSummaries(ctx.db, ctx, planId),
  ]);
  let warnings = stallWarnings(steps, now, ctx.stallThresholdSeconds);

  if (plan.status === "executing" && warnings.length > 0) {
    // Re-check under the plan lock: another call may have moved the plan meanwhile.
    [plan, steps] = await ctx.db.transaction(async (tx) => {
      const locked = await lockPlan(tx, ctx, planId);
      const current = await loadStepSummaries(tx, ctx, planId);
      const stalled = stallWarnings(current, now, ctx.stallThresholdSeconds);
      if (locked.status !== "executing" || stalled.length === 0) return [locked, current] as const;
      const status = await setPlanStatus(tx, locked, "stalled", now);
      await writeAuditLog(tx, ctx, {
        eventType: "plan_modified",
        planId,
        payload: {
          action: "stall_detected",
          stallThresholdSeconds: ctx.stallThresholdSeconds,
          stalledSteps: stalled,
        },
      });
      return [{ ...locked, status, updatedAt: now }, current] as const;
    });
    warnings = stallWarnings(steps, now, ctx.stallThresholdSeconds);
  }

  return {
    planId: plan.id,
    name: plan.name,
    status: plan.status,
    progress: computeProgress(steps.map((s) => s.status)),
    stallWarnings: warnings,
    stallThresholdSeconds: ctx.stallThresholdSeconds,
    /** Why the plan's server-run steps stopped, and the call that unblocks them. */
    pauseReason: plan.pauseReason,
    steps: steps.map((s) => ({
      stepId: s.id,
      stepOrder: s.stepOrder,
      stepType: s.stepType,
      status: s.status,
    })),
    updatedAt: plan.updatedAt.toISOString(),
  };
}
