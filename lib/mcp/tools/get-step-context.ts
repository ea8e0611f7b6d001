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
  description: `Before working on a step after the first, load what came before it: the results, summaries and reports of every earlier step, and the research artifacts stored for this plan (in full, paged oldest first: the first ${CONTEXT_ARTIFACTS_DEFAULT} unless you pass artifactsLimit, up to ${CONTEXT_ARTIFACTS_MAX}; artifactsTotal counts them all and, while artifactsNextCursor is not null, call again with artifactsCursor set to it). It changes nothing else, but renews your lease on a step in progress (leaseExpiresAt), so a long step is not handed out again while you work on it.`,
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
