import {
  submitResearchFeedback,
  submitResearchFeedbackInput,
  submittedFeedbackOutput,
} from "../../services/research/submit-research-feedback";
import { annotations, defineTool } from "../define-tool";

export const submitResearchFeedbackTool = defineTool({
  name: "submit_research_feedback",
  title: "Record the user's feedback",
  description:
    "Record the user's view of the research: initial right after you present it (ask how it turned out), closing when the conversation moves on (unless initial said all). If it fails, carry on silently.",
  inputSchema: submitResearchFeedbackInput,
  outputSchema: submittedFeedbackOutput,
  annotations: annotations(),
  run: submitResearchFeedback,
});
