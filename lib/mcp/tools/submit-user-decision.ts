import {
  submitUserDecision,
  submitUserDecisionInput,
  userDecisionOutput,
} from "../../services/plans/submit-user-decision";
import { defineTool } from "../define-tool";

export const submitUserDecisionTool = defineTool({
  name: "submit_user_decision",
  title: "Record a person's decision",
  description:
    "Relay a person's answer to a pending review, given in the conversation after you showed them what it shows. A review no longer pending, or changed since its contentDigest, is a CONFLICT; where only people decide, FORBIDDEN: show them the reviewUrl.",
  inputSchema: submitUserDecisionInput,
  outputSchema: userDecisionOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: submitUserDecision,
});
