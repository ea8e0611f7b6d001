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
import { annotations, defineTool } from "../define-tool";

export const storeResearchTool = defineTool({
  name: "store_research",
  title: "Store a research artifact",
  description:
    "Keep a significant finding (source summary, finding, data extract, analysis, critique, synthesis) in this account's library, with the plan step's planId and stepId; search_sources finds it later.",
  inputSchema: storeResearchInput.extend({ completesStep: completesStepField }),
  outputSchema: withCompletedStepOutput(storedArtifactOutput),
  annotations: annotations(),
  run: withStepLink("store_research", storeResearch),
});
