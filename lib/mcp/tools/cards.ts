import {
  cardDecisionInput,
  cardDecisionOutput,
  cardInput,
  decideInReviewCard,
  planCardOutput,
  readPlanCard,
  readReviewCard,
  reviewCardOutput,
} from "../../services/reviews/review-card";
import { APP_ONLY } from "../apps";
import { annotations, defineTool } from "../define-tool";

// The cards' own tools (lib/mcp/apps.ts): hidden from the model, called by the
// review card and the plan card through the host.

export const readReviewCardTool = defineTool({
  name: "read_review_card",
  title: "Read the review card",
  description:
    "For Cairn's review card only: the plan's pending review as the review page shows it, and whether a decision in the card counts on this connection.",
  inputSchema: cardInput,
  outputSchema: reviewCardOutput,
  _meta: APP_ONLY,
  annotations: annotations({ readOnly: true, idempotent: true }),
  run: readReviewCard,
});

export const decideInReviewCardTool = defineTool({
  name: "decide_in_review_card",
  title: "Decide in the review card",
  description:
    "For Cairn's review card only: the person's decision on the review the card shows (its id and contentDigest), recorded as theirs where the connection proves a person.",
  inputSchema: cardDecisionInput,
  outputSchema: cardDecisionOutput,
  _meta: APP_ONLY,
  annotations: annotations({ destructive: true }),
  run: decideInReviewCard,
});

export const readPlanCardTool = defineTool({
  name: "read_plan_card",
  title: "Read the plan card",
  description:
    "For Cairn's plan card only: the plan's status, progress, stall warnings and pause, and the plan page's link.",
  inputSchema: cardInput,
  outputSchema: planCardOutput,
  _meta: APP_ONLY,
  annotations: annotations({ idempotent: true }),
  run: readPlanCard,
});
