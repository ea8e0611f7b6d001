import {
  completesStepField,
  withCompletedStepOutput,
  withStepLink,
} from "../../services/plans/complete-linked-step";
import {
  storedArtifactOutput,
  storeResearch,
  storeResearchInput,
} from "../../services/research/store-research";
import { defineTool } from "../define-tool";

export const storeResearchTool = defineTool({
  name: "store_research",
  title: "Store a research artifact",
  description:
    "Keep a significant finding in this account's research library after a step produced it: a source summary, finding, data extract, comparison table, analysis, critique or synthesis. Give a specific title, the structured content (JSON object), the same content as readable text (contentText, which search_sources searches), your confidence and the source URLs, plus planId and stepId when it came from a plan step. Stored artifacts show up in get_step_context and get_research_context, and future research finds them with search_sources. Returns { artifactId }.",
  inputSchema: storeResearchInput.extend({ completesStep: completesStepField }),
  outputSchema: withCompletedStepOutput(storedArtifactOutput),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: withStepLink("store_research", storeResearch),
});
