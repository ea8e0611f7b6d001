import { getNextStep, getNextStepInput, nextStepOutput } from "../../services/plans/get-next-step";
import { cardLink, REVIEW_CARD_URI } from "../apps";
import { defineTool } from "../define-tool";

export const getNextStepTool = defineTool({
  name: "get_next_step",
  title: "Get the next step",
  description:
    'Pull the next step of a plan to work on; this is the loop\'s heart. Each call starts one pending step (several agents may pull from one plan at once: each gets a different step). The answer\'s status tells you what to do: "ready" (do step.instructions, then submit_step_result), "plan_complete" (write the deliverable using the formatting notes returned), "plan_failed", "awaiting_review" (a person must decide first: stop and resume later), "awaiting_steps" (a condition asked for more steps: call modify_plan add_steps or decline_add_steps), "paused" (a step Cairn runs itself could not run: pauseReason says why and suggestedTool is the call that unblocks it) or "no_pending_steps" (steps are still in progress or failed). Steps with a tool are run by Cairn inside this call (serverSteps lists them); the inputs of a ready step come with their bindings resolved (step.inputs). Every hand-out carries a lease (step.leaseExpiresAt): submit before it runs out, or the step is handed out again (step.attempt counts hand-outs). A step a reviewer sent back with modify is handed out again first. A stalled plan resumes here. When the plan\'s latest review was settled by its deadline (nobody answered in time), reviewTimedOut says what Cairn did and why.',
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
