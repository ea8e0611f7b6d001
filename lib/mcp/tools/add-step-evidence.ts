import {
  addedStepEvidenceOutput,
  addStepEvidence,
  addStepEvidenceInput,
} from "../../services/evidence/add-step-evidence";
import { defineTool } from "../define-tool";

export const addStepEvidenceTool = defineTool({
  name: "add_step_evidence",
  title: "Add evidence to a completed step",
  description:
    "Add sources read and claims (each with the sources that support it, with a quote or locator, and any that contradict it) to a step already completed, e.g. when a critique finds a contradicting source for an earlier step's claim. Sources merge with the plan's by canonical URL, DOI or arXiv id; a claim may cite only sources the plan has read. Recorded in the plan's audit trail. For a step still open, send evidence with submit_step_result instead.",
  inputSchema: addStepEvidenceInput,
  outputSchema: addedStepEvidenceOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: addStepEvidence,
});
