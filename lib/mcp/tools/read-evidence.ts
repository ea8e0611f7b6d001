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
    "Read on through a plan's sources and claims: get_step_context and get_research_context return the first page of each (evidence.sources, evidence.claims) with long extracts and quotes shortened. Pass sourcesCursor or claimsCursor (their evidence.sourcesNextCursor, evidence.claimsNextCursor) for the next page, or a sourceKey or claimId for that one source or claim whole. Changes nothing.",
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
