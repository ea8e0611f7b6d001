import {
  getResearchContext,
  getResearchContextInput,
  researchContextOutput,
} from "../../services/research/research-context";
import { cardLink, PLAN_CARD_URI } from "../apps";
import { defineTool } from "../define-tool";

export const getResearchContextTool = defineTool({
  name: "get_research_context",
  title: "Load a plan's full context",
  description:
    "Resume a plan in a new session: the plan, every step (instructions, status, result, report), conditions, reviews, the skill execution, evidence and artifacts (first pages), the deliverable and feedback. Records the resume; then get_next_step.",
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
