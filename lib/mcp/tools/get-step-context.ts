import {
  getStepContext,
  getStepContextInput,
  stepContextOutput,
} from "../../services/research/research-context";
import { defineTool } from "../define-tool";

export const getStepContextTool = defineTool({
  name: "get_step_context",
  title: "Get a step's context",
  description:
    "Before a step after the first: earlier steps' results and reports (paged: stepsCursor), the plan's evidence and artifacts, cut as in get_research_context. Renews your lease on the step.",
  inputSchema: getStepContextInput,
  outputSchema: stepContextOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  run: getStepContext,
});
