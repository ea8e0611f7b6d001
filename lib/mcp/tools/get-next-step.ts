import { z } from "zod";
import { getNextStep, getNextStepInput } from "../../services/plans/get-next-step";
import {
  awaitingStepsOutput,
  pauseReasonOutput,
  planStatus,
  stepType,
} from "../../services/shared/output-fields";
import { defineTool } from "../define-tool";

export const getNextStepTool = defineTool({
  name: "get_next_step",
  title: "Get the next step",
  description:
    'Pull the next step of a plan to work on; this is the loop\'s heart. Each call starts one pending step (several agents may pull from one plan at once: each gets a different step). The answer\'s status tells you what to do: "ready" (do step.instructions, then submit_step_result), "plan_complete" (write the deliverable using the formatting notes returned), "plan_failed", "awaiting_review" (a person must decide first: stop and resume later), "awaiting_steps" (a condition asked for more steps: call modify_plan add_steps or decline_add_steps), "paused" (a step Cairn runs itself could not run: pauseReason says why and suggestedTool is the call that unblocks it) or "no_pending_steps" (steps are still in progress or failed). Steps with a tool are run by Cairn inside this call (serverSteps lists them); the inputs of a ready step come with their bindings resolved (step.inputs). Every hand-out carries a lease (step.leaseExpiresAt): submit before it runs out, or the step is handed out again (step.attempt counts hand-outs). A step a reviewer sent back with modify is handed out again first. A stalled plan resumes here. When the plan\'s latest review was settled by its deadline (nobody answered in time), reviewTimedOut says what Cairn did and why.',
  inputSchema: getNextStepInput,
  outputSchema: z.object({
    status: z.enum([
      "ready",
      "plan_complete",
      "plan_failed",
      "awaiting_review",
      "awaiting_steps",
      "paused",
      "no_pending_steps",
    ]),
    planId: z.string(),
    hint: z.string(),
    planStatus: planStatus.optional(),
    step: z
      .object({
        stepId: z.string(),
        stepOrder: z.number(),
        stepType,
        instructions: z.string(),
        attempt: z.number(),
        leaseExpiresAt: z.string(),
        inputs: z.record(z.string(), z.unknown()).optional(),
        unresolvedInputs: z.array(z.string()).optional(),
      })
      .optional(),
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
    stepFormattingNotes: z
      .array(z.object({ stepId: z.string(), stepOrder: z.number(), notes: z.string() }))
      .optional(),
    review: z
      .object({
        reviewRequestId: z.string(),
        stepId: z.string(),
        summary: z.string(),
        dueAt: z.string().optional(),
        onTimeout: z.string().optional(),
        escalatedAt: z.string().optional(),
      })
      .nullable()
      .optional(),
    reviewTimedOut: z
      .object({
        reviewRequestId: z.string(),
        stepId: z.string(),
        action: z.enum(["approve", "reject", "skip", "escalate"]),
        reason: z.string(),
        at: z.string(),
      })
      .optional(),
    inProgressCount: z.number().optional(),
    failedCount: z.number().optional(),
    nextLeaseExpiresAt: z.string().nullable().optional(),
    condition: awaitingStepsOutput.optional(),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: getNextStep,
});
