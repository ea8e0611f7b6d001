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
    "Relay the user's answer to a pending review when they gave it to you in the conversation, after showing them what the review shows (people can also answer on the review page, request_user_review's reviewUrl). Name the review (reviewRequestId) and pass its contentDigest, so the decision applies only to what the person saw: a review no longer pending, or whose content changed since, is a CONFLICT and nothing changes. The team may let only people decide: then you get FORBIDDEN with the review page's URL to show the user instead. approve completes the step with the proposedResult of the review; a review without one completes it with the result the person entered (result: required when the step has an outputSchema, which must accept it), else with a record of the decision and evaluates its branching conditions on exactly that; reject fails the step and the plan; modify sends the step back to you with the feedback appended to its instructions (feedback required): get_next_step hands it out again next; skip skips the step. The trail marks the decision as relayed by you. Then call get_next_step.",
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
