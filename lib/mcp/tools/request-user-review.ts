import {
  requestUserReview,
  requestUserReviewInput,
  reviewRequestedOutput,
} from "../../services/plans/request-user-review";
import { cardLink, REVIEW_CARD_URI } from "../apps";
import { annotations, defineTool } from "../define-tool";

export const requestUserReviewTool = defineTool({
  name: "request_user_review",
  title: "Ask a person to review",
  description:
    "Pause a plan for a person's review of the step in progress: plain summary, questions, your proposed result. Show the user reviewUrl (under people_only only a person decides, there); keep contentDigest for submit_user_decision. Until decided, get_next_step answers awaiting_review.",
  inputSchema: requestUserReviewInput,
  outputSchema: reviewRequestedOutput,
  _meta: cardLink(REVIEW_CARD_URI),
  annotations: annotations(),
  run: requestUserReview,
});
