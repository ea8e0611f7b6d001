import {
  submitUserDecision,
  submitUserDecisionInput,
  userDecisionOutput,
} from "../../services/plans/submit-user-decision";
import { defineTool } from "../define-tool";

export const submitUserDecisionTool = defineTool({
  name: "submit_user_decision",
  title: "Record a person's decision",
  description:
    "Record the user's answer to a pending review when they gave it to you in the conversation (people can also answer in Cairn's web UI). approve completes the step and evaluates its branching conditions as a submit would; reject fails the step and the plan; modify sends the step back to you with the feedback appended to its instructions (feedback required): get_next_step hands it out again next; skip skips the step. If the review was already answered, you get CONFLICT and nothing changes. Then call get_next_step.",
  inputSchema: submitUserDecisionInput,
  outputSchema: userDecisionOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: submitUserDecision,
});
