import { createdPlanOutput, createPlan, createPlanInput } from "../../services/plans/create-plan";
import { cardLink, PLAN_CARD_URI } from "../apps";
import { defineTool } from "../define-tool";

export const createResearchPlanTool = defineTool({
  name: "create_research_plan",
  title: "Create a research plan",
  description:
    "Start a new piece of research: store a plan of ordered, typed steps (1-200) with optional branching conditions that act after a step completes (skip_to a later step, fail the plan, or ask for more steps). Call this once per research request, after the interview and routing. For skip_to, give actionParams.targetStepOrder (the 1-based order of the target step). Pass your sessionId to link the plan to your skill execution. Returns the planId, every step's stepId and order, and the first step; then call get_next_step to begin.",
  inputSchema: createPlanInput,
  outputSchema: createdPlanOutput,
  _meta: cardLink(PLAN_CARD_URI),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: createPlan,
});
