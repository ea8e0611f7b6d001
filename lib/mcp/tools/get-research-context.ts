import {
  getResearchContext,
  getResearchContextInput,
  researchContextOutput,
} from "../../services/research/research-context";
import { cardLink, PLAN_CARD_URI } from "../apps";
import { annotations, defineTool } from "../define-tool";

export const getResearchContextTool = defineTool({
  name: "get_research_context",
  title: "Load a plan's full context",
  description:
    "Resume a plan in a new session: plan (forks), steps, conditions, reviews, skill execution, evidence, artifacts, deliverable, feedback. Pass a non-null <list>NextCursor back as its cursor. Long values are cut (named in shortened; read_evidence reads them whole).",
  inputSchema: getResearchContextInput,
  outputSchema: researchContextOutput,
  _meta: cardLink(PLAN_CARD_URI),
  annotations: annotations({ idempotent: true }),
  run: getResearchContext,
});
