import { z } from "zod";
import { SKILL_EXECUTION_STATUSES } from "../../plan-engine/skill-executions";
import {
  CONTEXT_ARTIFACTS_DEFAULT,
  CONTEXT_ARTIFACTS_MAX,
  getResearchContext,
  getResearchContextInput,
} from "../../services/research/research-context";
import {
  artifact,
  awaitingStepsOutput,
  pauseReasonOutput,
  planStatus,
  progress,
  stepDetail,
} from "../../services/shared/output-fields";
import { defineTool } from "../define-tool";

export const getResearchContextTool = defineTool({
  name: "get_research_context",
  title: "Load a plan's full context",
  description: `Resume a plan from any session: returns the plan, every step with its instructions (including any user feedback), status, result, confidence and execution report, the branching conditions, the review history with decisions, the linked skill execution, the stored artifacts, the deliverable (the newest one stored) and feedback. Artifacts come in full but paged, oldest first: the first ${CONTEXT_ARTIFACTS_DEFAULT} unless you pass artifactsLimit (up to ${CONTEXT_ARTIFACTS_MAX}); artifactsTotal says how many the plan has, and when artifactsNextOffset is not null call again with artifactsOffset set to it for the next page (or use search_sources). Records that your session resumed the plan. Then call get_next_step.`,
  inputSchema: getResearchContextInput,
  outputSchema: z.object({
    plan: z.object({
      planId: z.string(),
      name: z.string(),
      researchQuestion: z.string(),
      status: planStatus,
      planDesignRationale: z.string().nullable(),
      outputFormattingNotes: z.string().nullable(),
      sessionId: z.string().nullable(),
      createdAt: z.string(),
      updatedAt: z.string(),
      completedAt: z.string().nullable(),
      pauseReason: pauseReasonOutput.nullable(),
      awaitingSteps: awaitingStepsOutput.nullable(),
    }),
    progress,
    steps: z.array(stepDetail),
    branchingConditions: z.array(
      z.object({
        conditionId: z.string(),
        afterStepId: z.string(),
        afterStepOrder: z.number().nullable(),
        conditionExpression: z.string(),
        ifTrueAction: z.string(),
        actionParams: z.record(z.string(), z.unknown()),
        evaluatedAt: z.string().nullable(),
        fired: z.boolean().nullable(),
      }),
    ),
    reviews: z.array(
      z.object({
        reviewRequestId: z.string(),
        stepId: z.string(),
        stepOrder: z.number().nullable(),
        status: z.string(),
        summary: z.string(),
        questions: z.array(z.string()),
        requestedBy: z.string(),
        requestedAt: z.string(),
        dueAt: z.string().nullable(),
        onTimeout: z.string().nullable(),
        escalatedAt: z.string().nullable(),
        assignedUserId: z.string().nullable(),
        assignedRole: z.string().nullable(),
        decision: z
          .object({
            decision: z.string(),
            feedback: z.string().nullable(),
            decidedBy: z.string(),
            decidedAt: z.string(),
          })
          .nullable(),
      }),
    ),
    skillExecution: z
      .object({
        executionId: z.string(),
        skillName: z.string(),
        status: z.enum(SKILL_EXECUTION_STATUSES),
        sessionId: z.string().nullable(),
        metadata: z.record(z.string(), z.unknown()),
        closedReason: z.string().nullable(),
        errorMessage: z.string().nullable(),
        createdAt: z.string(),
        completedAt: z.string().nullable(),
      })
      .nullable(),
    artifacts: z.array(artifact),
    artifactsTotal: z.number().int(),
    artifactsNextOffset: z.number().int().nullable(),
    deliverable: z
      .object({
        outputId: z.string(),
        outputMediaType: z.string(),
        content: z.string(),
        formattingNotes: z.string().nullable(),
        createdAt: z.string(),
      })
      .nullable(),
    feedback: z.array(
      z.object({
        feedbackId: z.string(),
        feedbackType: z.string(),
        satisfaction: z.number(),
        summary: z.string(),
        improvementSuggestions: z.string().nullable(),
        followUpRequested: z.boolean(),
        createdAt: z.string(),
      }),
    ),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  run: getResearchContext,
});
