import {
  getPlanStatus,
  getPlanStatusInput,
  planStatusOutput,
} from "../../services/plans/get-plan-status";
import { cardLink, PLAN_CARD_URI } from "../apps";
import { defineTool } from "../define-tool";

export const getPlanStatusTool = defineTool({
  name: "get_plan_status",
  title: "Get a plan's status",
  description:
    "Check a plan's health: its status, progress (percent of steps done and a count per step status) and stall warnings (steps in progress longer than the stall threshold), and pauseReason when a step Cairn runs itself could not run (with the call that unblocks it). A plan with a stalled step is marked stalled; resume it with get_next_step, or resolve the stuck step with modify_plan (fail_step / retry_step). Use it to diagnose a failure before deciding how to recover.",
  inputSchema: getPlanStatusInput,
  outputSchema: planStatusOutput,
  _meta: cardLink(PLAN_CARD_URI),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  run: getPlanStatus,
});
