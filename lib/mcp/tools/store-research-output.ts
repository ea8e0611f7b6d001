import {
  storedOutputOutput,
  storeResearchOutput,
  storeResearchOutputInput,
} from "../../services/research/store-research-output";
import { annotations, defineTool } from "../define-tool";

export const storeResearchOutputTool = defineTool({
  name: "store_research_output",
  title: "Store the deliverable",
  description:
    "Store the final deliverable when get_next_step says plan_complete, before presenting it; the answer's hint says what to fix in its citations. If it fails, present it anyway.",
  inputSchema: storeResearchOutputInput,
  outputSchema: storedOutputOutput,
  annotations: annotations(),
  run: storeResearchOutput,
});
