import { getNextStep, getNextStepInput, nextStepOutput } from "../../services/plans/get-next-step";
import { cardLink, REVIEW_CARD_URI } from "../apps";
import { defineTool } from "../define-tool";

export const getNextStepTool = defineTool({
  name: "get_next_step",
  title: "Get the next step",
  description:
    "Hand out a plan's next step (several agents may pull from one plan), after running the server-run steps in line (serverSteps). By status: ready: do step.instructions with step.inputs, then submit_step_result before step.leaseExpiresAt (or it is handed out again); plan_complete: write the deliverable with the formatting notes; awaiting_review: a person decides first; awaiting_steps: modify_plan add_steps or decline_add_steps; paused: pauseReason.suggestedTool unblocks it; no_pending_steps: steps are still in progress.",
  inputSchema: getNextStepInput,
  outputSchema: nextStepOutput,
  _meta: cardLink(REVIEW_CARD_URI),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: getNextStep,
});
