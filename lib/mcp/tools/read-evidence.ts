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
    "The next page of a plan's sources or claims, one source (sourceKey) or claim (claimId) whole, or a value a context shortened (of: its step, artifact or deliverable id; part: its name) as text from offset. Changes nothing.",
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
