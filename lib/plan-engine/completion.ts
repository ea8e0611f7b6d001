/**
 * What a step's completion does, decided on a snapshot (docs/branching-conditions.md):
 * its conditions, the skips, a failed or completed plan, the reviews a plan
 * that ends withdraws. Shared by a submit, an approve and a server-run step.
 */
import { AppError } from "./app-error";
import { type AuditEntry, reviewWithdrawnEntry } from "./audit-entries";
import { type BranchAction, evaluateBranching, stepsToSkip } from "./branch-actions";
import { buildConditionContext } from "./conditions";
import type { AwaitingSteps, LoopCondition, PlanSnapshot } from "./plan-snapshot";
import { planStatusAfter, settledPlanStatus, statusesWhilePaused } from "./plan-status";
import type { PlanStatus } from "./states";
import { isTerminalPlanStatus, transitionStep } from "./transitions";

export type FiredCondition = {
  conditionId: string;
  conditionExpression: string;
  action: BranchAction["type"];
  skippedStepIds?: string[];
  addStepsParams?: Record<string, unknown>;
};

/** The effects of a step completing: its conditions, the skips, the plan's status. */
export type CompletionEffects = {
  verdicts: { id: string; fired: boolean }[];
  fired: FiredCondition[];
  skippedStepIds: string[];
  planStatus: PlanStatus;
  awaitingSteps: AwaitingSteps | null;
  withdrawnReviewIds: string[];
  audit: AuditEntry[];
};

/** Withdraws the pending reviews of a plan that has just ended. */
export function withdrawOnEnd(
  plan: PlanSnapshot,
  planStatus: PlanStatus,
  audit: AuditEntry[],
  except?: string,
): string[] {
  if (!isTerminalPlanStatus(planStatus)) return [];
  const withdrawn = plan.pendingReviews.filter((review) => review.id !== except);
  for (const review of withdrawn) {
    audit.push(
      reviewWithdrawnEntry(plan.id, review, `The plan ${planStatus} before anyone answered.`),
    );
  }
  return withdrawn.map((review) => review.id);
}

/**
 * What follows from `stepId` reaching `completed` (the step itself is written
 * by the caller): its conditions are evaluated in stored order against the
 * step's result, `skip_to` skips the pending steps up to its target, `fail`
 * fails the plan, `add_steps` keeps the plan from completing underneath the
 * agent when this was its last open step, and the plan's status follows.
 */
export function completionEffects(
  plan: PlanSnapshot,
  stepId: string,
  conditions: readonly LoopCondition[],
  outcome: {
    result: Record<string, unknown>;
    confidence: number | null;
    missingConfidence?: "zero" | "absent";
  },
): CompletionEffects {
  const step = plan.steps.find((s) => s.id === stepId);
  if (!step) throw new AppError("INTERNAL_ERROR", `Step ${stepId} is not in the snapshot.`);
  const audit: AuditEntry[] = [];
  const steps = plan.steps.map((s) =>
    s.id === stepId ? { ...s, status: "completed" as const } : s,
  );
  const branching = evaluateBranching(
    conditions,
    buildConditionContext({
      confidence: outcome.confidence,
      result: outcome.result,
      missingConfidence: outcome.missingConfidence ?? "zero",
    }),
  );
  const firedIds = new Set(branching.fired.map((fired) => fired.conditionId));
  // Conditions after a `fail` are not evaluated: they keep a null verdict.
  const lastEvaluated = branching.planFailed
    ? conditions.findIndex((c) => c.id === branching.fired.at(-1)?.conditionId)
    : conditions.length - 1;
  const verdicts = conditions
    .slice(0, lastEvaluated + 1)
    .map((c) => ({ id: c.id, fired: firedIds.has(c.id) }));

  const fired: FiredCondition[] = [];
  const skippedStepIds: string[] = [];
  let awaitingSteps = plan.awaitingSteps;
  let failure: string | undefined;
  for (const { conditionId, action } of branching.fired) {
    const condition = conditions.find((c) => c.id === conditionId);
    const conditionExpression = condition?.conditionExpression ?? "";
    const entry: FiredCondition = { conditionId, conditionExpression, action: action.type };
    if (action.type === "skip_to") {
      const skip = stepsToSkip(steps, stepId, action.targetStepId);
      const skipped = transitionStep("pending", "skipped");
      for (const [index, s] of steps.entries()) {
        if (skip.includes(s.id)) steps[index] = { ...s, status: skipped };
      }
      skippedStepIds.push(...skip);
      entry.skippedStepIds = skip;
      if (skip.length > 0) {
        audit.push({
          eventType: "plan_modified",
          planId: plan.id,
          stepId,
          payload: {
            action: "branch_skipped_steps",
            conditionId,
            targetStepId: action.targetStepId,
            skippedStepIds: skip,
          },
        });
      }
    } else if (action.type === "add_steps") {
      entry.addStepsParams = { ...action.params };
      awaitingSteps = {
        conditionId,
        conditionExpression,
        stepId,
        stepOrder: step.stepOrder,
        params: { ...action.params },
      };
    } else if (action.type === "fail") {
      failure = action.reason ?? `condition "${conditionExpression}" held`;
      audit.push({
        eventType: "plan_modified",
        planId: plan.id,
        stepId,
        payload: { action: "branch_failed_plan", conditionId, reason: failure },
      });
    }
    fired.push(entry);
  }
  const statuses = statusesWhilePaused(plan, steps);
  // A fired add_steps holds the plan's hand-outs until the agent adds the steps
  // (modify_plan add_steps) or says none are needed (decline_add_steps), even
  // with steps left: otherwise get_next_step hands out the next one and the
  // added steps land after work already under way.
  const paused = plan.steps.find((s) => s.id === plan.pausedOnFailedStepId);
  if (failure !== undefined && paused && paused.id !== stepId) {
    // A pause holds against a failure too: the plan does not end around it.
    throw new AppError(
      "CONFLICT",
      `Plan ${plan.id} is paused on step ${paused.stepOrder}, whose tool failed, and a branching condition of this step ("${failure}") would fail the plan around that pause. Nothing was changed. Answer the pause first (its suggested call, retry_step, or cancel_plan), then send this again.`,
      { pausedStepId: paused.id },
    );
  }
  const planStatus =
    failure !== undefined
      ? planStatusAfter(plan.status, "failed")
      : settledPlanStatus(plan.status, statuses, awaitingSteps);
  const withdrawnReviewIds = withdrawOnEnd(plan, planStatus, audit);
  return {
    verdicts,
    fired,
    skippedStepIds,
    planStatus,
    awaitingSteps: isTerminalPlanStatus(planStatus) ? null : awaitingSteps,
    withdrawnReviewIds,
    audit,
  };
}
