/** Zod pieces shared by the tools' output schemas. */
import { z } from "zod";
import { PAUSE_KINDS } from "../../plan-engine/bindings";
import { BRANCH_ACTIONS } from "../../plan-engine/branch-actions";
import { PLAN_STATUSES, STEP_STATUSES, STEP_TYPES } from "../../plan-engine/states";

export const planStatus = z.enum(PLAN_STATUSES);
export const stepStatus = z.enum(STEP_STATUSES);
export const stepType = z.enum(STEP_TYPES);

export const progress = z.object({
  /** Terminal steps (completed, skipped, failed) as a share of all steps, 0-100. */
  percent: z.number(),
  total: z.number(),
  pending: z.number(),
  inProgress: z.number(),
  awaitingInput: z.number(),
  completed: z.number(),
  skipped: z.number(),
  failed: z.number(),
});

export const stallWarning = z.object({
  stepId: z.string(),
  stepOrder: z.number(),
  inProgressSeconds: z.number(),
  /** Seconds since the step's holder last renewed its lease: what makes it a stall. */
  idleSeconds: z.number(),
});

export const stepRef = z.object({ stepId: z.string(), stepOrder: z.number(), stepType });

export const stepDetail = z.object({
  stepId: z.string(),
  stepOrder: z.number(),
  stepType,
  status: stepStatus,
  instructions: z.string(),
  // Objects: submit_step_result and every server step store one (an object in
  // the published schema rather than "anything", which strict tool-calling modes refuse).
  result: z.record(z.string(), z.unknown()).nullable(),
  resultSummary: z.string().nullable(),
  confidence: z.number().nullable(),
  stepExecutionReport: z.record(z.string(), z.unknown()).nullable(),
  outputFormattingNotes: z.string().nullable(),
  failureReason: z.string().nullable(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  tool: z.string().nullable(),
  arguments: z.record(z.string(), z.unknown()).nullable(),
  inputs: z.record(z.string(), z.unknown()).nullable(),
  outputSchema: z.record(z.string(), z.unknown()).nullable(),
  /** In a fork: the source plan's step this one was carried from, with its result. */
  carriedFromStepId: z.string().nullable(),
});

export const artifact = z.object({
  artifactId: z.string(),
  stepId: z.string().nullable(),
  artifactType: z.string(),
  title: z.string(),
  content: z.record(z.string(), z.unknown()),
  contentText: z.string(),
  confidence: z.number().nullable(),
  sourceUrls: z.array(z.string()),
  createdAt: z.string(),
});

/** Conditions that held after a step completed (submit_step_result, or a reviewer's approve). */
export const firedConditionsOutput = z.array(
  z.object({
    conditionId: z.string(),
    conditionExpression: z.string(),
    action: z.enum(BRANCH_ACTIONS),
    skippedStepIds: z.array(z.string()).optional(),
    addStepsParams: z.record(z.string(), z.unknown()).optional(),
  }),
);

/** Why Cairn stopped running a plan's server-run steps, and the call that unblocks it. */
/** Who cancelled a plan, when and why (docs/state-machines.md, "Cancel"). */
export const cancellationOutput = z.object({
  by: z.string(),
  reason: z.string(),
  at: z.string(),
});

export const pauseReasonOutput = z.object({
  type: z.enum(PAUSE_KINDS),
  stepId: z.string(),
  stepOrder: z.number(),
  tool: z.string(),
  message: z.string(),
  missing: z.array(z.string()).optional(),
  producingStepOrder: z.number().optional(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  errorCode: z.string().optional(),
  retryable: z.boolean().optional(),
  suggestedTool: z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()) }),
});

/** A fired add_steps condition a plan waits on (get_next_step's awaiting_steps). */
export const awaitingStepsOutput = z.object({
  conditionId: z.string(),
  conditionExpression: z.string(),
  stepId: z.string(),
  stepOrder: z.number(),
  params: z.record(z.string(), z.unknown()),
});

/** A review that needs several people's approval: "k of N" and who approved (docs/reviews.md, "Quorum"). */
export const approvalsOutput = z.object({
  count: z.number(),
  required: z.number(),
  approvedBy: z.array(z.string()),
});
