import { getNextStep, getNextStepInput } from "../../services/plans/get-next-step";
import { nextStepOutput } from "../../services/plans/next-step-output";
import { cardLink, REVIEW_CARD_URI } from "../apps";
import { annotations, defineTool } from "../define-tool";

export const getNextStepTool = defineTool({
  name: "get_next_step",
  title: "Get the next step",
  description:
    "Hand out a plan's next step, after its server-run steps (serverSteps). By status: ready: do step.instructions with step.inputs, submit_step_result before step.leaseExpiresAt; plan_complete: write the deliverable; awaiting_review: a person decides; awaiting_steps: modify_plan add_steps or decline_add_steps; paused: call pauseReason.suggestedTool; no_pending_steps: others work.",
  inputSchema: getNextStepInput,
  outputSchema: nextStepOutput,
  _meta: cardLink(REVIEW_CARD_URI),
  annotations: annotations(),
  run: getNextStep,
});
