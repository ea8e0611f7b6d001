import { addStepEvidenceTool } from "./add-step-evidence";
import { cancelPlanTool } from "./cancel-plan";
import { decideInReviewCardTool, readPlanCardTool, readReviewCardTool } from "./cards";
import { createResearchPlanTool } from "./create-research-plan";
import { extractDataTool } from "./extract-data";
import { forkPlanTool } from "./fork-plan";
import { getNextStepTool } from "./get-next-step";
import { getPlanHistoryTool } from "./get-plan-history";
import { getPlanStatusTool } from "./get-plan-status";
import { getResearchContextTool } from "./get-research-context";
import { getSkillTool } from "./get-skill";
import { getStepContextTool } from "./get-step-context";
import { listActivePlansTool } from "./list-active-plans";
import { logSkillExecutionTool } from "./log-skill-execution";
import { modifyPlanTool } from "./modify-plan";
import { pingTool } from "./ping";
import { readEvidenceTool } from "./read-evidence";
import { requestUserReviewTool } from "./request-user-review";
import { searchSourcesTool } from "./search-sources";
import { storeResearchTool } from "./store-research";
import { storeResearchOutputTool } from "./store-research-output";
import { submitResearchFeedbackTool } from "./submit-research-feedback";
import { submitStepResultTool } from "./submit-step-result";
import { submitUserDecisionTool } from "./submit-user-decision";

/** Every tool Cairn serves, in the order tools/list shows them. */
export const TOOLS = [
  getSkillTool,
  logSkillExecutionTool,
  searchSourcesTool,
  createResearchPlanTool,
  getNextStepTool,
  submitStepResultTool,
  addStepEvidenceTool,
  getStepContextTool,
  readEvidenceTool,
  storeResearchTool,
  extractDataTool,
  requestUserReviewTool,
  submitUserDecisionTool,
  modifyPlanTool,
  forkPlanTool,
  cancelPlanTool,
  getPlanStatusTool,
  getPlanHistoryTool,
  listActivePlansTool,
  getResearchContextTool,
  storeResearchOutputTool,
  submitResearchFeedbackTool,
  pingTool,
  readReviewCardTool,
  decideInReviewCardTool,
  readPlanCardTool,
];
