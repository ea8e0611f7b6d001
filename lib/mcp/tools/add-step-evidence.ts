import {
  addedStepEvidenceOutput,
  addStepEvidence,
  addStepEvidenceInput,
} from "../../services/evidence/add-step-evidence";
import { annotations, defineTool } from "../define-tool";

export const addStepEvidenceTool = defineTool({
  name: "add_step_evidence",
  title: "Add evidence to a completed step",
  description:
    "Add sources and claims to a completed step (e.g. a contradicting source found later); a claim cites only sources the plan has read. For an open step: submit_step_result.",
  inputSchema: addStepEvidenceInput,
  outputSchema: addedStepEvidenceOutput,
  annotations: annotations(),
  run: addStepEvidence,
});
