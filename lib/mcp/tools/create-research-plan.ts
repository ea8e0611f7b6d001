import { z } from "zod";
import { createPlan, createPlanInput } from "../../services/plans/create-plan";
import { defineTool } from "../define-tool";
import { stepRef, stepType } from "../output-fields";

export const createResearchPlanTool = defineTool({
  name: "create_research_plan",
  title: "Create a research plan",
  description:
    "Start a new piece of research: store a plan of ordered, typed steps (1-200) with optional branching conditions that act after a step completes (skip_to a later step, fail the plan, or ask for more steps). Call this once per research request, after the interview and routing. For skip_to, give actionParams.targetStepOrder (the 1-based order of the target step). Pass your sessionId to link the plan to your skill execution. Returns the planId, every step's stepId and order, and the first step; then call get_next_step to begin.",
  inputSchema: createPlanInput,
  outputSchema: z.object({
    planId: z.string(),
    name: z.string(),
    status: z.literal("planning"),
    steps: z.array(stepRef),
    firstStep: z.object({
      stepId: z.string(),
      stepOrder: z.number(),
      stepType,
      instructions: z.string(),
    }),
    branchingConditions: z.array(
      z.object({
        conditionId: z.string(),
        afterStepOrder: z.number(),
        conditionExpression: z.string(),
        ifTrueAction: z.string(),
        actionParams: z.record(z.string(), z.unknown()),
      }),
    ),
    linkedExecutionId: z.string().nullable(),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: createPlan,
});
