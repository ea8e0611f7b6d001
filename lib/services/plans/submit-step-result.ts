/**
 * submit_step_result: locks the plan, then the step, and reads a snapshot;
 * the engine (`decideSubmit`) decides the step's completion, its branching
 * conditions, the skips, the plan's status and every audit row; one statement
 * writes all of it.
 *
 * The loop calls this once per step, so it is two statements inside its
 * transaction: one that locks and reads everything the decision needs, and,
 * after the engine has decided, one that writes every change and its audit rows.
 */
import "server-only";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { checkCheckpointPass } from "../../plan-engine/checkpoint-guard";
import type { FiredCondition } from "../../plan-engine/completion";
import { sourcesFromFetches } from "../../plan-engine/evidence";
import type { AwaitingSteps, PlanSnapshot } from "../../plan-engine/plan-snapshot";
import type { PlanStatus } from "../../plan-engine/states";
import { decideCommonSubmit, decideSubmit } from "../../plan-engine/submit";
import {
  evidenceInput,
  hasEvidence,
  recordEvidence,
  recordedEvidenceOutput,
} from "../evidence/record-evidence";
import { writeDecidedSubmit } from "../loop/complete-step";
import { completeStepGuarded } from "../loop/complete-step-guarded";
import { type LockedForSubmit, lockPlanForSubmit } from "../loop/lock-for-submit";
import {
  conditionsAfter,
  type PlanSnapshotRead,
  readPlanSnapshot,
} from "../loop/read-plan-snapshot";
import { planStatusEvent } from "../notifications/events";
import { noteNotificationQueued } from "../notifications/queued";
import { readDecisionPolicy } from "../reviews/decision-rules";
import type { ServiceContext } from "../shared/context";
import {
  jsonAtMost,
  MAX_REPORT_LIST_BYTES,
  MAX_RESULT_BYTES,
  planIdField,
  RESULT_TOO_BIG,
  stepIdField,
} from "../shared/fields";
import { firedConditionsOutput, planStatus } from "../shared/output-fields";
import { checkOutputSchema } from "../shared/output-schema";
import { planNotFound, stepNotFound } from "../shared/plan-access";
import { parseInput } from "../shared/validation";

const REPORT_TOO_BIG =
  "record each item briefly (the query, the URL, the facts used) rather than whole pages or outputs.";

export const stepExecutionReportInput = z
  .object({
    thinking: z.string().max(200_000),
    webSearches: jsonAtMost(
      z.array(z.unknown()).describe("Queries, result counts, results used and why."),
      MAX_REPORT_LIST_BYTES,
      REPORT_TOO_BIG,
    ),
    webFetches: jsonAtMost(
      z
        .array(z.unknown())
        .describe("URLs fetched, summaries, facts; each page becomes a plan source."),
      MAX_REPORT_LIST_BYTES,
      REPORT_TOO_BIG,
    ),
    otherToolCalls: jsonAtMost(
      z.array(z.unknown()).describe("Other tool calls, inputs and results."),
      MAX_REPORT_LIST_BYTES,
      REPORT_TOO_BIG,
    ),
    subagents: jsonAtMost(
      z.array(z.unknown()).describe("Subagent tasks and report ids."),
      MAX_REPORT_LIST_BYTES,
      REPORT_TOO_BIG,
    ),
  })
  .describe("How the step was done; [] for an empty list.");

export const submitStepResultInput = z.object({
  planId: planIdField,
  stepId: stepIdField,
  result: jsonAtMost(
    z.record(z.string(), z.unknown()).describe("Conditions read it as result.<field>."),
    MAX_RESULT_BYTES,
    RESULT_TOO_BIG,
  ),
  resultSummary: z.string().max(10_000).optional().describe("Two or three sentences for a person."),
  confidence: z.number().min(0).max(1).optional().describe("Conditions see 0 when omitted."),
  stepExecutionReport: stepExecutionReportInput,
  outputFormattingNotes: z
    .string()
    .max(10_000)
    .optional()
    .describe("What this step taught about the deliverable's formatting."),
  evidence: evidenceInput.optional(),
});

export type { FiredCondition };

/** The answer: the step's and the plan's new status and the conditions that fired (the MCP tool's output schema). */
export const submittedStepOutput = z.object({
  planId: z.string(),
  stepId: z.string(),
  stepOrder: z.number(),
  stepStatus: z.literal("completed"),
  planStatus,
  conditionsEvaluated: z.number(),
  firedConditions: firedConditionsOutput,
  /** The sources and claims recorded with the result (absent when there were none). */
  evidence: recordedEvidenceOutput.optional(),
  hint: z.string(),
});

export type SubmittedStep = z.infer<typeof submittedStepOutput>;

/** The locked plan and step and what the engine reads of the plan, current under the lock. */
type Snapshot = Omit<LockedForSubmit, "steps" | "pendingReviews" | "conditions"> & PlanSnapshotRead;

/**
 * Locks the plan, then the step, and reads the snapshot in one statement
 * (`lockPlanForSubmit`), or, when the plan changed while that statement waited
 * for the lock, reads the snapshot again now that the lock is held. The one
 * change that can slip past the first (get_next_step handing out a step under
 * its key share lock, PLAN_LOCK) never changes a derived status; it only
 * matters to skip_to, which the caller decides again on statuses read after
 * the lock (`mayLagClaims`).
 */
async function lockAndRead(
  tx: Transaction,
  ctx: ServiceContext,
  planId: string,
  stepId: string,
): Promise<{ snapshot: Snapshot; mayLagClaims: boolean } | undefined> {
  const locked = await lockPlanForSubmit(tx, ctx, planId, stepId);
  if (!locked) return undefined;
  const { steps, pendingReviews, conditions } = locked;
  if (locked.fresh && steps && pendingReviews && conditions) {
    return { snapshot: { ...locked, steps, pendingReviews, conditions }, mayLagClaims: true };
  }
  return {
    snapshot: { ...locked, ...(await readPlanSnapshot(tx, ctx.tenantId, planId)) },
    mayLagClaims: false,
  };
}

type SubmitInput = z.output<typeof submitStepResultInput>;

/** What the engine decides a submit on, from the call's input. */
const submitEvent = (input: SubmitInput) => ({
  stepId: input.stepId,
  result: input.result,
  resultSummary: input.resultSummary ?? null,
  confidence: input.confidence ?? null,
});

/**
 * The common submit as one statement, so one round trip and no BEGIN/COMMIT:
 * the engine decided it ahead (`decideCommonSubmit`), and the statement locks
 * the plan, then the step, checks the engine's preconditions, picks the plan's
 * next status from the stored steps, and writes the step, the plan and the
 * audit rows only if every precondition held. A step with branching
 * conditions takes two: the first answers them, the engine decides on them,
 * and the second writes the verdicts too, unless a condition fires an action
 * that changes the plan. Undefined when a precondition did not hold (or the
 * plan changed while the statement waited for its lock): the caller then
 * decides on a full snapshot.
 */
async function submitInOneStatement(
  ctx: ServiceContext,
  input: SubmitInput,
  now: string,
): Promise<SubmittedStep | undefined> {
  const event = submitEvent(input);
  const guarded = {
    ...event,
    planId: input.planId,
    stepExecutionReport: input.stepExecutionReport,
    outputFormattingNotes: input.outputFormattingNotes ?? null,
  };
  let decided = decideCommonSubmit(input.planId, event);
  if (!decided) return undefined;
  let row = await completeStepGuarded(ctx.db, ctx, guarded, decided, now);
  if (row && "conditions" in row) {
    decided = decideCommonSubmit(input.planId, event, row.conditions);
    if (!decided) return undefined;
    row = await completeStepGuarded(ctx.db, ctx, guarded, decided, now);
  }
  if (!row || "conditions" in row) return undefined;
  // The statement queued plan.completed or plan.failed when it ended the plan.
  if (planStatusEvent(row.planStatus)) noteNotificationQueued();
  return {
    planId: input.planId,
    stepId: input.stepId,
    stepOrder: row.stepOrder,
    stepStatus: "completed",
    planStatus: row.planStatus,
    conditionsEvaluated: decided.preconditions.conditions.length,
    firedConditions: decided.fired,
    hint: submitHint(row.planStatus, null, decided.fired),
  };
}

export async function submitStepResult(
  ctx: ServiceContext,
  raw: z.input<typeof submitStepResultInput>,
): Promise<SubmittedStep> {
  const input = parseInput(submitStepResultInput, raw);
  const fetched = sourcesFromFetches(input.stepExecutionReport.webFetches);
  // Evidence is written in the result's transaction, which the one statement
  // has no room for: a submit that carries some takes the full path.
  const withEvidence = hasEvidence(fetched, input.evidence);
  if (!withEvidence) {
    const committed = await submitInOneStatement(ctx, input, new Date().toISOString());
    if (committed) return committed;
  }
  return ctx.db.transaction(async (tx) => {
    const read = await lockAndRead(tx, ctx, input.planId, input.stepId);
    if (!read) throw planNotFound(input.planId);
    let { snapshot } = read;
    if (snapshot.stepId === null) throw stepNotFound(snapshot.planId, input.stepId);
    const event = submitEvent(input);
    let conditions = conditionsAfter(snapshot, input.stepId);
    // The engine's refusals first (a step already completed, awaiting a
    // review, held by one): they say where the step stands.
    let decision = decideSubmit(planSnapshot(snapshot), conditions, event);
    if (snapshot.stepType === "checkpoint") {
      checkCheckpointPass(
        await readDecisionPolicy(tx, ctx.tenantId),
        ctx.actor.type,
        { stepOrder: decision.step.stepOrder, stepType: snapshot.stepType },
        "result",
      );
    }
    if (snapshot.outputSchema) {
      checkOutputSchema(
        snapshot.outputSchema,
        input.result,
        "result",
        "submit a result that does (get_research_context shows the schema).",
      );
    }
    // A skip decided on statuses that may miss a step handed out meanwhile is
    // decided again on statuses read now, under the plan lock.
    if (decision.skippedStepIds.length > 0 && read.mayLagClaims) {
      snapshot = { ...snapshot, ...(await readPlanSnapshot(tx, ctx.tenantId, snapshot.planId)) };
      conditions = conditionsAfter(snapshot, input.stepId);
      decision = decideSubmit(planSnapshot(snapshot), conditions, event);
    }
    const now = new Date().toISOString();
    await writeDecidedSubmit(tx, ctx, {
      planId: snapshot.planId,
      step: {
        id: input.stepId,
        result: input.result,
        resultSummary: input.resultSummary ?? null,
        confidence: input.confidence ?? null,
        stepExecutionReport: input.stepExecutionReport,
        outputFormattingNotes: input.outputFormattingNotes ?? null,
        startedAt: snapshot.startedAt ?? now,
      },
      decision,
      now,
    });
    const evidence = withEvidence
      ? await recordEvidence(tx, ctx, {
          planId: snapshot.planId,
          stepId: input.stepId,
          stepOrder: decision.step.stepOrder,
          origin: "step_result",
          fetched,
          evidence: input.evidence,
          now,
        })
      : undefined;
    const { planStatus, fired } = decision;
    return {
      planId: snapshot.planId,
      stepId: input.stepId,
      stepOrder: decision.step.stepOrder,
      stepStatus: "completed",
      planStatus,
      conditionsEvaluated: conditions.length,
      firedConditions: fired,
      ...(evidence ? { evidence } : {}),
      hint: submitHint(planStatus, decision.awaitingSteps, fired),
    };
  });
}

function submitHint(
  planStatus: PlanStatus,
  awaitingSteps: AwaitingSteps | null,
  fired: FiredCondition[],
): string {
  if (planStatus === "failed") {
    return "A branching condition failed the plan. Present what was gathered and where it stopped.";
  }
  if (awaitingSteps) {
    return "A condition asks for more steps and the plan waits for them: call modify_plan with action add_steps (or decline_add_steps to finish without them), then get_next_step.";
  }
  if (fired.some((f) => f.action === "add_steps")) {
    return "A condition asks for more steps: call modify_plan with action add_steps, then get_next_step.";
  }
  if (planStatus === "completed") {
    return "The plan is complete. Call get_next_step for the formatting notes, then deliver the output.";
  }
  return "Call get_next_step for the next step.";
}

function planSnapshot(snapshot: Snapshot): PlanSnapshot {
  return {
    id: snapshot.planId,
    status: snapshot.planStatus,
    awaitingSteps: snapshot.awaitingSteps,
    steps: snapshot.steps,
    pendingReviews: snapshot.pendingReviews,
    pausedOnFailedStepId:
      snapshot.pauseReason?.type === "tool_error" ? snapshot.pauseReason.stepId : null,
  };
}
