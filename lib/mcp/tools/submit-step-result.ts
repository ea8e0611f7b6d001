import { z } from "zod";
import { submitStepResult, submitStepResultInput } from "../../services/plans/submit-step-result";
import { defineTool } from "../define-tool";
import { firedConditionsOutput, planStatus } from "../output-fields";

export const submitStepResultTool = defineTool({
  name: "submit_step_result",
  title: "Submit a step's result",
  description:
    "Complete a step you got from get_next_step: send its structured result (a JSON object), a short summary, your confidence (0-1) and the execution report (thinking, webSearches, webFetches, otherToolCalls, subagents; use [] when empty). Cairn then evaluates the step's branching conditions (which may skip steps, fail the plan, or ask you to add steps) and returns the new step and plan status and the conditions that fired. Then call get_next_step.",
  inputSchema: submitStepResultInput,
  outputSchema: z.object({
    planId: z.string(),
    stepId: z.string(),
    stepOrder: z.number(),
    stepStatus: z.literal("completed"),
    planStatus,
    conditionsEvaluated: z.number(),
    firedConditions: firedConditionsOutput,
    hint: z.string(),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: submitStepResult,
});
