import {
  getPlanStatus,
  getPlanStatusInput,
  planStatusOutput,
} from "../../services/plans/get-plan-status";
import { cardLink, PLAN_CARD_URI } from "../apps";
import { annotations, defineTool } from "../define-tool";

export const getPlanStatusTool = defineTool({
  name: "get_plan_status",
  title: "Get a plan's status",
  description:
    "A plan's health: status, progress, stall warnings, pauseReason. Resume a stalled plan with get_next_step, or settle its stuck step (modify_plan fail_step, retry_step).",
  inputSchema: getPlanStatusInput,
  outputSchema: planStatusOutput,
  _meta: cardLink(PLAN_CARD_URI),
  annotations: annotations({ idempotent: true }),
  run: getPlanStatus,
});
