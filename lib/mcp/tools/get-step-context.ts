import {
  getStepContext,
  getStepContextInput,
  stepContextOutput,
} from "../../services/research/step-context";
import { annotations, defineTool } from "../define-tool";

export const getStepContextTool = defineTool({
  name: "get_step_context",
  title: "Get a step's context",
  description:
    "Before a step after the first: earlier steps' results and reports (paged: stepsCursor), the plan's evidence and artifacts, long values cut. Renews your lease on a step in progress.",
  inputSchema: getStepContextInput,
  outputSchema: stepContextOutput,
  annotations: annotations({ idempotent: true }),
  run: getStepContext,
});
