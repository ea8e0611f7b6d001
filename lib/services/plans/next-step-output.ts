/**
 * get_next_step's answer: its shape on the wire (the MCP tool's output
 * schema) and, for callers, the answer of each status apart.
 */
import { z } from "zod";
import type { PauseReason } from "../../plan-engine/bindings";
import type { AwaitingSteps } from "../../plan-engine/plan-snapshot";
import { TIMEOUT_ACTIONS } from "../../plan-engine/review-deadlines";
import type { PlanStatus } from "../../plan-engine/states";
import {
  approvalsOutput,
  awaitingStepsOutput,
  cancellationOutput,
  pauseReasonOutput,
  planStatus,
  stepType,
} from "../shared/output-fields";
import type { ServerStepRun } from "./run-server-steps";

/** The answers' statuses; `NextStep` below is the answer of each. */
const NEXT_STEP_STATUSES = [
  "ready",
  "plan_complete",
  "plan_failed",
  "plan_cancelled",
  "awaiting_review",
  "awaiting_steps",
  "paused",
  "no_pending_steps",
] as const;

/** The step a ready answer hands out. */
const handedOutStepOutput = z.object({
  stepId: z.string(),
  stepOrder: z.number(),
  stepType,
  instructions: z.string(),
  // 1 for the first hand-out; more when the step is handed out again.
  attempt: z.number(),
  // Until then the step is yours; after it, get_next_step may hand it to another caller.
  leaseExpiresAt: z.string(),
  // The step's inputs with their bindings resolved (absent when it has none).
  inputs: z.record(z.string(), z.unknown()).optional(),
  // Bindings of `inputs` that could not be resolved (left out of `inputs`).
  unresolvedInputs: z.array(z.string()).optional(),
});

const stepFormattingNotesOutput = z.array(
  z.object({ stepId: z.string(), stepOrder: z.number(), notes: z.string() }),
);

/** The review an awaiting_review answer waits on. */
const pendingReviewOutput = z.object({
  reviewRequestId: z.string(),
  stepId: z.string(),
  summary: z.string(),
  // What an approve completes the step with, and the digest a decision binds to.
  proposedResult: z.record(z.string(), z.unknown()).optional(),
  proposedConfidence: z.number().optional(),
  contentDigest: z.string(),
  // When Cairn acts itself, and how (absent without a deadline).
  dueAt: z.string().optional(),
  onTimeout: z.string().optional(),
  // Set when the deadline handed the review to the admins.
  escalatedAt: z.string().optional(),
  // Needing several people's approval: k of N and who approved.
  approvals: approvalsOutput.optional(),
});

/**
 * The answer on the wire (the MCP tool's output schema). An MCP output schema
 * is one object, so this lists the fields of every status's answer, each
 * optional but the ones all share; `NextStep` keeps the answer of each status
 * apart for callers, and the tool's definition checks that each one fits here.
 */
export const nextStepOutput = z.object({
  status: z.enum(NEXT_STEP_STATUSES),
  planId: z.string(),
  hint: z.string(),
  planStatus: planStatus.optional(),
  step: handedOutStepOutput.optional(),
  serverSteps: z
    .array(
      z.object({
        stepId: z.string(),
        stepOrder: z.number(),
        tool: z.string(),
        status: z.enum(["completed", "failed"]),
      }),
    )
    .optional(),
  pauseReason: pauseReasonOutput.optional(),
  totalSteps: z.number().optional(),
  outputMediaType: z.string().nullable().optional(),
  outputFormattingInstructions: z.string().nullable().optional(),
  planFormattingNotes: z.string().nullable().optional(),
  stepFormattingNotes: stepFormattingNotesOutput.optional(),
  review: pendingReviewOutput.nullable().optional(),
  reviewTimedOut: z
    .object({
      reviewRequestId: z.string(),
      stepId: z.string(),
      action: z.enum(TIMEOUT_ACTIONS),
      reason: z.string(),
      at: z.string(),
    })
    .optional(),
  inProgressCount: z.number().optional(),
  failedCount: z.number().optional(),
  nextLeaseExpiresAt: z.string().nullable().optional(),
  condition: awaitingStepsOutput.optional(),
  cancellation: cancellationOutput.optional(),
});

export type NextStep =
  | {
      status: "ready";
      planId: string;
      planStatus: "executing";
      step: z.infer<typeof handedOutStepOutput>;
      totalSteps: number;
      serverSteps?: ServerStepRun[];
      hint: string;
    }
  | {
      status: "plan_complete";
      planId: string;
      outputMediaType: string | null;
      outputFormattingInstructions: string | null;
      planFormattingNotes: string | null;
      stepFormattingNotes: z.infer<typeof stepFormattingNotesOutput>;
      serverSteps?: ServerStepRun[];
      hint: string;
    }
  | { status: "plan_failed"; planId: string; serverSteps?: ServerStepRun[]; hint: string }
  | {
      status: "plan_cancelled";
      planId: string;
      cancellation: z.infer<typeof cancellationOutput>;
      hint: string;
    }
  | {
      status: "paused";
      planId: string;
      planStatus: PlanStatus;
      /** Why Cairn could not run the next server-run step, and the call that unblocks it. */
      pauseReason: PauseReason;
      serverSteps?: ServerStepRun[];
      hint: string;
    }
  | {
      status: "awaiting_review";
      planId: string;
      review: z.infer<typeof pendingReviewOutput> | null;
      /** Set when the plan is also paused on a server-run step (from before reviews on a paused plan were refused). */
      pauseReason?: PauseReason;
      hint: string;
    }
  | {
      status: "awaiting_steps";
      planId: string;
      planStatus: PlanStatus;
      /** The fired add_steps condition the plan waits on. */
      condition: AwaitingSteps;
      serverSteps?: ServerStepRun[];
      hint: string;
    }
  | {
      status: "no_pending_steps";
      planId: string;
      planStatus: PlanStatus;
      inProgressCount: number;
      failedCount: number;
      /** When the first lease of a step in progress runs out (it is then handed out again). */
      nextLeaseExpiresAt: string | null;
      serverSteps?: ServerStepRun[];
      hint: string;
    };

export type ReadyStep = Extract<NextStep, { status: "ready" }>;
