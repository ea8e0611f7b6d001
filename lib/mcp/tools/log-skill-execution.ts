import {
  loggedSkillExecutionOutput,
  logSkillExecution,
  logSkillExecutionInput,
} from "../../services/research/log-skill-execution";
import { defineTool } from "../define-tool";

export const logSkillExecutionTool = defineTool({
  name: "log_skill_execution",
  title: "Track a research skill run",
  description:
    'Create or update the tracking record of one research request. Create it once, right after the interview and routing, with no executionId, status "started", your sessionId and metadata { topic, researchType, scope, depthSignals, decisionContext, knownContext, outputMediaType, outputFormattingInstructions, clarifyingQuestions or skipQuestionsReason, routingRationale, delegatedTo: "scan" | "deep", originalQuery }; keep the returned executionId. create_research_plan with the same sessionId moves it to "executing" for you. Repeat the current status to add metadata (e.g. priorResearchCheck). Close it with "completed" (closedReason; metadata { stepsCompleted, artifactsStored, checkpointFeedback }) or "failed" (errorMessage). Returns { executionId, status, planId }.',
  inputSchema: logSkillExecutionInput,
  outputSchema: loggedSkillExecutionOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: logSkillExecution,
});
