import { modifyPlan, modifyPlanInput, planModifiedOutput } from "../../services/plans/modify-plan";
import { defineTool } from "../define-tool";

export const modifyPlanTool = defineTool({
  name: "modify_plan",
  title: "Modify a plan",
  description:
    "Change a plan that is planning, executing or stalled, with a modificationRationale: add_steps (insert after insertAfterOrder, or append), remove_step (a pending step), reorder_steps (all step ids in the new order), update_step_instructions, fail_step (a pending or in-progress step; the plan continues, or completes when it was the last open step: the answer's planEnded says so) or retry_step (a failed step goes back to pending; on a plan that completed with that step failed, it re-opens the plan). A stalled plan can be changed too. To end a plan, call cancel_plan. Returns the plan status and the steps in their new order.",
  inputSchema: modifyPlanInput,
  outputSchema: planModifiedOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: modifyPlan,
});
