import {
  readEvidenceInput,
  readEvidenceOutput,
  readPlanEvidence,
} from "../../services/evidence/read-plan-evidence";
import { defineTool } from "../define-tool";

export const readEvidenceTool = defineTool({
  name: "read_evidence",
  title: "Read a plan's evidence",
  description:
    "The next page of a plan's sources or claims (the contexts give the first, long texts shortened), or one source (sourceKey) or claim (claimId) whole. Changes nothing.",
  inputSchema: readEvidenceInput,
  outputSchema: readEvidenceOutput,
  annotations: {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  run: readPlanEvidence,
});
