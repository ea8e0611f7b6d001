/**
 * submit_step_result (execution-loop.md, "Submitting results";
 * branching-conditions.md, "Evaluation Flow"). Locks the plan, then the step;
 * completes the step (auto-starting a still-pending one, the timing edge case),
 * evaluates the step's branching conditions, performs skip_to / fail, and derives
 * the plan status from all steps, with the audit rows in the same transaction.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { planBranchingConditions, planSteps } from "../db/schema";
import { AppError } from "../plan-engine/app-error";
import { type BranchAction, evaluateBranching, stepsToSkip } from "../plan-engine/branch-actions";
import { buildConditionContext } from "../plan-engine/conditions";
import type { PlanStatus, StepStatus } from "../plan-engine/states";
import { derivePlanStatus, isTerminalPlanStatus, transitionStep } from "../plan-engine/transitions";
import { type AuditEntry, writeAuditLog } from "./audit";
import type { ServiceContext } from "./context";
import { planIdField, stepIdField } from "./fields";
import {
  loadStepStatuses,
  planNotFound,
  planStatusAfter,
  selectPlanForUpdate,
  selectStepForUpdate,
  setPlanStatus,
  stepNotFound,
} from "./plan-access";
import { parseInput } from "./validation";

export const stepExecutionReportInput = z
  .object({
    thinking: z
      .string()
      .max(200_000)
      .describe(
        "Reasoning narrative: hypotheses, decisions, discarded approaches, confidence factors.",
      ),
    webSearches: z
      .array(z.unknown())
      .describe("Exact queries, result counts, which results were used and why ([] if none)."),
    webFetches: z
      .array(z.unknown())
      .describe("URLs fetched, content summaries, extracted facts ([] if none)."),
    otherToolCalls: z
      .array(z.unknown())
      .describe("Other tool invocations with inputs and results ([] if none)."),
    subagents: z
      .array(z.unknown())
      .describe("Subagent delegations with task descriptions and report ids ([] if none)."),
  })
  .describe(
    "How the step was done. Every field is required; use [] for lists with nothing in them.",
  );

export const submitStepResultInput = z.object({
  planId: planIdField,
  stepId: stepIdField,
  result: z
    .record(z.string(), z.unknown())
    .describe(
      "The step's structured result as a JSON object; branching conditions read its fields as result.<field>.",
    ),
  resultSummary: z
    .string()
    .max(10_000)
    .optional()
    .describe("Two or three sentences a person can read in the plan view."),
  confidence: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe("Your confidence in the result, from 0 to 1 (conditions see 0 when omitted)."),
  stepExecutionReport: stepExecutionReportInput,
  outputFormattingNotes: z
    .string()
    .max(10_000)
    .optional()
    .describe("Notes for the final deliverable's formatting that this step taught you."),
});

export type FiredCondition = {
  conditionId: string;
  conditionExpression: string;
  action: BranchAction["type"];
  skippedStepIds?: string[];
  addStepsParams?: Record<string, unknown>;
};

export type SubmittedStep = {
  planId: string;
  stepId: string;
  stepOrder: number;
  stepStatus: "completed";
  planStatus: PlanStatus;
  conditionsEvaluated: number;
  firedConditions: FiredCondition[];
  hint: string;
};

export async function submitStepResult(
  ctx: ServiceContext,
  raw: z.input<typeof submitStepResultInput>,
): Promise<SubmittedStep> {
  const input = parseInput(submitStepResultInput, raw);
  return ctx.db.transaction(async (tx) => {
    // Every read in one round trip: the statements are pipelined and PostgreSQL
    // runs them in the order sent, so the plan row is locked before the step.
    // The other steps are read as statuses only; their results are not needed.
    const [plans, lockedSteps, conditions, statuses] = await Promise.all([
      selectPlanForUpdate(tx, ctx, input.planId),
      selectStepForUpdate(tx, ctx, input.planId, input.stepId),
      tx
        .select()
        .from(planBranchingConditions)
        .where(eq(planBranchingConditions.afterStepId, input.stepId))
        .orderBy(asc(planBranchingConditions.position)),
      loadStepStatuses(tx, ctx, input.planId),
    ]);
    const plan = plans[0];
    if (!plan) throw planNotFound(input.planId);
    if (isTerminalPlanStatus(plan.status)) {
      throw new AppError(
        "INVALID_TRANSITION",
        `Plan ${plan.id} is ${plan.status}, so no step result can be submitted. Call get_next_step to see what to do next.`,
        { planStatus: plan.status },
      );
    }
    const step = lockedSteps[0];
    if (!step) throw stepNotFound(plan.id, input.stepId);
    if (step.status !== "in_progress" && step.status !== "pending") {
      throw new AppError(
        "INVALID_TRANSITION",
        `Step ${step.stepOrder} is ${step.status}, so it cannot take a result (only a pending or in-progress step can). ` +
          (step.status === "awaiting_input"
            ? "It is waiting for a person's review; call get_next_step later."
            : "Call get_next_step for the step to work on now."),
        { entity: "step", from: step.status, to: "completed" },
      );
    }
    const now = new Date();
    const autoStarted = step.status === "pending";
    const started: StepStatus = autoStarted
      ? transitionStep("pending", "in_progress")
      : step.status;
    const completed = transitionStep(started, "completed");
    // Decide everything first, then send every write in one round trip. With the
    // plan row locked no other call changes this plan's steps meanwhile, so the
    // statuses read above, updated here as the writes will, are the stored ones.
    const writes: Promise<unknown>[] = [
      tx
        .update(planSteps)
        .set({
          status: completed,
          result: input.result,
          resultSummary: input.resultSummary ?? null,
          confidence: input.confidence ?? null,
          stepExecutionReport: input.stepExecutionReport,
          outputFormattingNotes: input.outputFormattingNotes ?? null,
          startedAt: step.startedAt ?? now,
          completedAt: now,
          updatedAt: now,
        })
        .where(eq(planSteps.id, step.id))
        .then(),
    ];
    const steps = statuses.map((s) => (s.id === step.id ? { ...s, status: completed } : s));
    const audit: AuditEntry[] = [
      {
        eventType: "step_completed",
        planId: plan.id,
        stepId: step.id,
        payload: {
          stepOrder: step.stepOrder,
          confidence: input.confidence ?? null,
          resultSummary: input.resultSummary ?? null,
          autoStarted,
        },
      },
    ];

    const outcome = evaluateBranching(
      conditions,
      buildConditionContext({ confidence: input.confidence, result: input.result }),
    );
    const firedIds = new Set(outcome.fired.map((fired) => fired.conditionId));
    // Conditions after a `fail` are not evaluated (spec step 4): they keep a null verdict.
    const failedAt = outcome.planFailed
      ? conditions.findIndex((c) => c.id === outcome.fired.at(-1)?.conditionId)
      : conditions.length - 1;
    const evaluatedIds = conditions.slice(0, failedAt + 1).map((c) => c.id);
    for (const verdict of [true, false]) {
      const ids = evaluatedIds.filter((id) => firedIds.has(id) === verdict);
      if (ids.length === 0) continue;
      writes.push(
        tx
          .update(planBranchingConditions)
          .set({ evaluatedAt: now, fired: verdict })
          .where(inArray(planBranchingConditions.id, ids))
          .then(),
      );
    }

    const fired: FiredCondition[] = [];
    let planStatus: PlanStatus = plan.status;
    for (const { conditionId, action } of outcome.fired) {
      const condition = conditions.find((c) => c.id === conditionId);
      const entry: FiredCondition = {
        conditionId,
        conditionExpression: condition?.conditionExpression ?? "",
        action: action.type,
      };
      if (action.type === "skip_to") {
        const skip = stepsToSkip(steps, step.id, action.targetStepId);
        if (skip.length > 0) {
          const skipped = transitionStep("pending", "skipped");
          writes.push(
            tx
              .update(planSteps)
              .set({ status: skipped, updatedAt: now })
              .where(and(inArray(planSteps.id, skip), eq(planSteps.status, "pending")))
              .then(),
          );
          const skipSet = new Set(skip);
          for (const [index, s] of steps.entries()) {
            if (skipSet.has(s.id) && s.status === "pending")
              steps[index] = { ...s, status: skipped };
          }
          audit.push({
            eventType: "plan_modified",
            planId: plan.id,
            stepId: step.id,
            payload: {
              action: "branch_skipped_steps",
              conditionId,
              targetStepId: action.targetStepId,
              skippedStepIds: skip,
            },
          });
        }
        entry.skippedStepIds = skip;
      } else if (action.type === "add_steps") {
        entry.addStepsParams = { ...action.params };
      } else if (action.type === "fail") {
        planStatus = planStatusAfter(plan, "failed");
        writes.push(setPlanStatus(tx, plan, "failed", now));
        audit.push({
          eventType: "plan_modified",
          planId: plan.id,
          stepId: step.id,
          payload: {
            action: "branch_failed_plan",
            conditionId,
            reason: action.reason ?? `condition "${entry.conditionExpression}" held`,
          },
        });
      }
      fired.push(entry);
    }

    if (!outcome.planFailed) {
      const derived = derivePlanStatus(steps.map((s) => s.status));
      // A stalled plan whose slow step just finished resumes; "planning" only
      // when the step was submitted before get_next_step (the edge case).
      planStatus = planStatusAfter(plan, derived);
      writes.push(setPlanStatus(tx, plan, derived, now));
    }
    writes.push(writeAuditLog(tx, ctx, audit));
    await Promise.all(writes);

    const addSteps = fired.find((f) => f.action === "add_steps");
    return {
      planId: plan.id,
      stepId: step.id,
      stepOrder: step.stepOrder,
      stepStatus: "completed",
      planStatus,
      conditionsEvaluated: conditions.length,
      firedConditions: fired,
      hint:
        planStatus === "failed"
          ? "A branching condition failed the plan. Present what was gathered and where it stopped."
          : addSteps
            ? "A condition asks for more steps: call modify_plan with action add_steps, then get_next_step."
            : planStatus === "completed"
              ? "The plan is complete. Call get_next_step for the formatting notes, then deliver the output."
              : "Call get_next_step for the next step.",
    };
  });
}
