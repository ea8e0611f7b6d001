import { cancelPlan, cancelPlanInput, planCancelledOutput } from "../../services/plans/cancel-plan";
import { defineTool } from "../define-tool";

export const cancelPlanTool = defineTool({
  name: "cancel_plan",
  title: "Cancel a plan",
  description:
    "End an unfinished plan (planning, executing, awaiting review, stalled, paused or waiting for steps) with a reason, when the work should not go on. Its pending reviews are withdrawn and the leases of its steps end; the plan becomes cancelled for good and every later call on it says who cancelled it and why. A completed plan cannot be cancelled (one that ended with a failed step can be re-opened with modify_plan retry_step).",
  inputSchema: cancelPlanInput,
  outputSchema: planCancelledOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
  run: cancelPlan,
});
