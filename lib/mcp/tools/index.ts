import { createResearchPlanTool } from "./create-research-plan";
import { getNextStepTool } from "./get-next-step";
import { getPlanStatusTool } from "./get-plan-status";
import { getResearchContextTool } from "./get-research-context";
import { getStepContextTool } from "./get-step-context";
import { listActivePlansTool } from "./list-active-plans";
import { modifyPlanTool } from "./modify-plan";
import { pingTool } from "./ping";
import { requestUserReviewTool } from "./request-user-review";
import { submitStepResultTool } from "./submit-step-result";
import { submitUserDecisionTool } from "./submit-user-decision";

/** Every tool Cairn serves, in the order tools/list shows them. */
export const TOOLS = [
  createResearchPlanTool,
  getNextStepTool,
  submitStepResultTool,
  getStepContextTool,
  requestUserReviewTool,
  submitUserDecisionTool,
  modifyPlanTool,
  getPlanStatusTool,
  listActivePlansTool,
  getResearchContextTool,
  pingTool,
];
