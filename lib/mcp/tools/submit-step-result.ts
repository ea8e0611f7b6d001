import {
  submitStepResult,
  submitStepResultInput,
  submittedStepOutput,
} from "../../services/plans/submit-step-result";
import { defineTool } from "../define-tool";

export const submitStepResultTool = defineTool({
  name: "submit_step_result",
  title: "Submit a step's result",
  description:
    "Complete a step you got from get_next_step: send its structured result (a JSON object), a short summary, your confidence (0-1) and the execution report (thinking, webSearches, webFetches, otherToolCalls, subagents; use [] when empty). Cairn then evaluates the step's branching conditions (which may skip steps, fail the plan, or ask you to add steps) and returns the new step and plan status and the conditions that fired. Then call get_next_step.",
  inputSchema: submitStepResultInput,
  outputSchema: submittedStepOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: submitStepResult,
});
