import { createdPlanOutput, createPlan, createPlanInput } from "../../services/plans/create-plan";
import { cardLink, PLAN_CARD_URI } from "../apps";
import { annotations, defineTool } from "../define-tool";

export const createResearchPlanTool = defineTool({
  name: "create_research_plan",
  title: "Create a research plan",
  description:
    "Store a research plan: 1-200 ordered, typed steps and optional branching conditions checked after a step completes. Once per request, after interview and routing; then get_next_step.",
  inputSchema: createPlanInput,
  outputSchema: createdPlanOutput,
  _meta: cardLink(PLAN_CARD_URI),
  annotations: annotations(),
  run: createPlan,
});
