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
    "Pause a plan for a person's review of the step in progress: a plain summary, questions, your proposed result. Show the user the answer's reviewUrl (under people_only only a person decides, there); keep contentDigest for submit_user_decision. get_next_step answers awaiting_review until it is decided.",
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
