import {
  requestUserReview,
  requestUserReviewInput,
  reviewRequestedOutput,
} from "../../services/plans/request-user-review";
import { cardLink, REVIEW_CARD_URI } from "../apps";
import { defineTool } from "../define-tool";

export const requestUserReviewTool = defineTool({
  name: "request_user_review",
  title: "Ask a person to review",
  description:
    "Pause the plan at a checkpoint so a person can review the step in progress: give a plain-language summary of what you found and any questions, and the result you propose (proposedResult, proposedConfidence): an approve completes the step with exactly that, and its branching conditions are evaluated on it. The answer gives the review page's URL (show it to the user), the team's decisionPolicy (people_only: only a person may decide, on that page) and the review's contentDigest (pass it back when you relay the user's answer with submit_user_decision). The step waits (awaiting_input) and the plan pauses (awaiting_review) until someone approves, rejects, modifies (with feedback) or skips it in Cairn; get_next_step answers awaiting_review meanwhile. Use it for checkpoint steps or whenever you need a human judgement. Optional: a deadline (deadlineSeconds or deadlineAt) with onTimeout (approve, reject, skip or escalate to the admins), which Cairn applies itself when nobody answers in time (the team may have a default deadline; where only people decide, you may not set approve or skip); and assignTo, a team member's e-mail or {role}.",
  inputSchema: requestUserReviewInput,
  outputSchema: reviewRequestedOutput,
  _meta: cardLink(REVIEW_CARD_URI),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: requestUserReview,
});
