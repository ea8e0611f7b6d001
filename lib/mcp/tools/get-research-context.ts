import {
  CONTEXT_ARTIFACTS_DEFAULT,
  CONTEXT_ARTIFACTS_MAX,
  getResearchContext,
  getResearchContextInput,
  researchContextOutput,
} from "../../services/research/research-context";
import { PREVIEW_CHARS } from "../../services/shared/bounded";
import { cardLink, PLAN_CARD_URI } from "../apps";
import { defineTool } from "../define-tool";

export const getResearchContextTool = defineTool({
  name: "get_research_context",
  title: "Load a plan's full context",
  description: `Resume a plan from any session: the plan, its steps (instructions with any user feedback, status, result, confidence, execution report) and the conditions after them, its reviews and decisions, skill execution, artifacts (the first ${CONTEXT_ARTIFACTS_DEFAULT} unless artifactsLimit says, up to ${CONTEXT_ARTIFACTS_MAX}; artifactsTotal counts them), newest deliverable and feedback. Steps, reviews and artifacts are paged oldest first: while stepsNextCursor, reviewsNextCursor or artifactsNextCursor is not null, call again with it as stepsCursor, reviewsCursor or artifactsCursor. Values over ${PREVIEW_CHARS} characters are cut (JSON to {"preview": …}) and named in shortened; read_evidence reads one whole. Records that your session resumed the plan. Then call get_next_step.`,
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
