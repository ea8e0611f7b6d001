import { modifyPlan, modifyPlanInput, planModifiedOutput } from "../../services/plans/modify-plan";
import { annotations, defineTool } from "../define-tool";

export const modifyPlanTool = defineTool({
  name: "modify_plan",
  title: "Modify a plan",
  description:
    "Change a planning, executing or stalled plan (retry_step also re-opens one completed with that step failed), with a modificationRationale; action says what each change takes. To end a plan, use cancel_plan.",
  inputSchema: modifyPlanInput,
  outputSchema: planModifiedOutput,
  annotations: annotations({ destructive: true }),
  run: modifyPlan,
});
