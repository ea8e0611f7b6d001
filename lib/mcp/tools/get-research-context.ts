import {
  CONTEXT_ARTIFACTS_DEFAULT,
  CONTEXT_ARTIFACTS_MAX,
  getResearchContext,
  getResearchContextInput,
  researchContextOutput,
} from "../../services/research/research-context";
import { cardLink, PLAN_CARD_URI } from "../apps";
import { defineTool } from "../define-tool";

export const getResearchContextTool = defineTool({
  name: "get_research_context",
  title: "Load a plan's full context",
  description: `Resume a plan from any session: returns the plan, every step with its instructions (including any user feedback), status, result, confidence and execution report, the branching conditions, the review history with decisions, the linked skill execution, the stored artifacts, the deliverable (the newest one stored) and feedback. Artifacts come in full but paged, oldest first: the first ${CONTEXT_ARTIFACTS_DEFAULT} unless you pass artifactsLimit (up to ${CONTEXT_ARTIFACTS_MAX}); artifactsTotal says how many the plan has, and when artifactsNextCursor is not null call again with artifactsCursor set to it for the next page (or use search_sources). Records that your session resumed the plan. Then call get_next_step.`,
  inputSchema: getResearchContextInput,
  outputSchema: researchContextOutput,
  _meta: cardLink(PLAN_CARD_URI),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  run: getResearchContext,
});
