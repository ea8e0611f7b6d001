import {
  completesStepField,
  withCompletedStepOutput,
  withStepLink,
} from "../../services/plans/complete-linked-step";
import {
  extractData,
  extractDataInput,
  extractedDataOutput,
} from "../../services/research/extract-data";
import { annotations, defineTool } from "../define-tool";

export const extractDataTool = defineTool({
  name: "extract_data",
  title: "Extract structured data",
  description:
    "For extract steps: Cairn's language model turns text or stored artifacts into a JSON object matching your schema (checked, retried once). On LLM_NOT_CONFIGURED, do it yourself. Stores nothing unless completesStep is given.",
  inputSchema: extractDataInput.extend({ completesStep: completesStepField }),
  outputSchema: withCompletedStepOutput(extractedDataOutput),
  annotations: annotations({ openWorld: true }),
  run: withStepLink("extract_data", extractData),
});
