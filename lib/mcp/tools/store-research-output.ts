import {
  storedOutputOutput,
  storeResearchOutput,
  storeResearchOutputInput,
} from "../../services/research/store-research-output";
import { defineTool } from "../define-tool";

export const storeResearchOutputTool = defineTool({
  name: "store_research_output",
  title: "Store the deliverable",
  description:
    "When get_next_step says plan_complete and you have written the final deliverable in the form the user asked for (outputMediaType, following the formatting instructions and notes), store it here before presenting it, so the user finds it later and get_research_context returns it. Links it to the plan and to the plan's skill execution (or the executionId you give). If storing fails, still present the deliverable. Returns { outputId }.",
  inputSchema: storeResearchOutputInput,
  outputSchema: storedOutputOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: storeResearchOutput,
});
