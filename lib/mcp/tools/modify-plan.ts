import { modifyPlan, modifyPlanInput, planModifiedOutput } from "../../services/plans/modify-plan";
import { defineTool } from "../define-tool";

export const modifyPlanTool = defineTool({
  name: "modify_plan",
  title: "Modify a plan",
  description:
    "Change a plan that is planning or executing, with a modificationRationale: add_steps (insert after insertAfterOrder, or append), remove_step (a pending step), reorder_steps (all step ids in the new order), update_step_instructions, fail_step (a pending or in-progress step; the plan continues) or retry_step (a failed step goes back to pending). fail_step and retry_step also resolve a stalled plan. Returns the plan status and the steps in their new order.",
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
