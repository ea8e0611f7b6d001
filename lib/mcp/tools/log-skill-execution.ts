import {
  loggedSkillExecutionOutput,
  logSkillExecution,
  logSkillExecutionInput,
} from "../../services/research/log-skill-execution";
import { annotations, defineTool } from "../define-tool";

export const logSkillExecutionTool = defineTool({
  name: "log_skill_execution",
  title: "Track a research skill run",
  description:
    "A research request's tracking record: create it after interview and routing (status started, sessionId, metadata); create_research_plan with that sessionId sets it executing. Close it completed (closedReason; metadata stepsCompleted, artifactsStored, checkpointFeedback) or failed (errorMessage).",
  inputSchema: logSkillExecutionInput,
  outputSchema: loggedSkillExecutionOutput,
  annotations: annotations(),
  run: logSkillExecution,
});
