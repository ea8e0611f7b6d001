import {
  submitUserDecision,
  submitUserDecisionInput,
  userDecisionOutput,
} from "../../services/plans/submit-user-decision";
import { annotations, defineTool } from "../define-tool";

export const submitUserDecisionTool = defineTool({
  name: "submit_user_decision",
  title: "Record a person's decision",
  description:
    "Relay a person's answer to a pending review, after showing them what it shows. A review no longer pending, or changed since its contentDigest, is a CONFLICT; where only people decide, FORBIDDEN: show them the reviewUrl. Then get_next_step.",
  inputSchema: submitUserDecisionInput,
  outputSchema: userDecisionOutput,
  annotations: annotations({ destructive: true }),
  run: submitUserDecision,
});
