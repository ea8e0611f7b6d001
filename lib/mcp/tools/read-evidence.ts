import {
  readEvidenceInput,
  readEvidenceOutput,
  readPlanEvidence,
} from "../../services/evidence/read-plan-evidence";
import { annotations, defineTool } from "../define-tool";

export const readEvidenceTool = defineTool({
  name: "read_evidence",
  title: "Read a plan's evidence",
  description:
    "The next page of a plan's sources or claims, one source (sourceKey) or claim (claimId) whole, or a value a context shortened (of: its step, artifact or deliverable id; part: its name) as text from offset.",
  inputSchema: readEvidenceInput,
  outputSchema: readEvidenceOutput,
  annotations: annotations({ readOnly: true, idempotent: true }),
  run: readPlanEvidence,
});
