import {
  submitStepResult,
  submitStepResultInput,
  submittedStepOutput,
} from "../../services/plans/submit-step-result";
import { annotations, defineTool } from "../define-tool";

export const submitStepResultTool = defineTool({
  name: "submit_step_result",
  title: "Submit a step's result",
  description:
    "Complete a step from get_next_step with its result, summary, confidence, execution report and evidence; its branching conditions then run (they may skip steps, fail the plan or ask for steps).",
  inputSchema: submitStepResultInput,
  outputSchema: submittedStepOutput,
  annotations: annotations(),
  run: submitStepResult,
});
