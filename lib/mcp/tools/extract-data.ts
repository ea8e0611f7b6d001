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
import { defineTool } from "../define-tool";

export const extractDataTool = defineTool({
  name: "extract_data",
  title: "Extract structured data",
  description:
    'For extract steps: turn text you give, or stored artifacts (artifactIds), into one JSON object that matches a JSON Schema you define (top level { "type": "object", ... }). Cairn asks its configured language model, validates the answer against your schema and retries once with the errors. Regular-expression keywords ("pattern", "patternProperties") are not supported (VALIDATION_ERROR). Returns { data, model, attempts }. Fails with LLM_NOT_CONFIGURED when the server has no model (then structure the data yourself), LLM_UPSTREAM_ERROR when the model is unreachable or answers more than 1 MB, EXTRACTION_FAILED when the answer still does not match. Nothing is stored (keep the result with store_research), unless completesStep links the call to a paused server-run step, whose result it then becomes.',
  inputSchema: extractDataInput.extend({ completesStep: completesStepField }),
  outputSchema: withCompletedStepOutput(extractedDataOutput),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: true,
  },
  run: withStepLink("extract_data", extractData),
});
