import {
  submitResearchFeedback,
  submitResearchFeedbackInput,
  submittedFeedbackOutput,
} from "../../services/research/submit-research-feedback";
import { defineTool } from "../define-tool";

export const submitResearchFeedbackTool = defineTool({
  name: "submit_research_feedback",
  title: "Record the user's feedback",
  description:
    'Record what the user thought of the research. feedbackType "initial": right after you present the deliverable and ask "How did this turn out? Anything I should have done differently?", with their satisfaction (1-5), a summary, improvement suggestions and whether they want follow-up research. "closing": when the conversation moves away from this topic, with what the later discussion showed (skip it if the initial feedback already said everything). If this call fails, carry on without telling the user. Returns { feedbackId }.',
  inputSchema: submitResearchFeedbackInput,
  outputSchema: submittedFeedbackOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: submitResearchFeedback,
});
