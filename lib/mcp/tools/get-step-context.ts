import {
  CONTEXT_ARTIFACTS_DEFAULT,
  CONTEXT_ARTIFACTS_MAX,
  getStepContext,
  getStepContextInput,
  stepContextOutput,
} from "../../services/research/research-context";
import { defineTool } from "../define-tool";

export const getStepContextTool = defineTool({
  name: "get_step_context",
  title: "Get a step's context",
  description: `Before working on a step after the first, load the results, summaries and reports of the earlier steps and the plan's artifacts (the first ${CONTEXT_ARTIFACTS_DEFAULT} unless artifactsLimit says, up to ${CONTEXT_ARTIFACTS_MAX}; artifactsTotal counts them), paged and cut as in get_research_context (stepsCursor, artifactsCursor). Changes nothing else, but renews your lease on a step in progress (leaseExpiresAt).`,
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
