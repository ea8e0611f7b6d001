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
    "Read on through a plan's sources and claims: get_step_context and get_research_context return the first page of each (evidence.sources, evidence.claims) with long extracts and quotes shortened. Pass sourcesCursor or claimsCursor (their evidence.sourcesNextCursor, evidence.claimsNextCursor) for the next page, or a sourceKey or claimId for that one source or claim whole; or of (a step's, artifact's or deliverable's id) and part (a name in its shortened) for that value whole as text, a page at a time from offset (text.nextOffset). Changes nothing.",
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
