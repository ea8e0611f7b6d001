import { cancelPlan, cancelPlanInput, planCancelledOutput } from "../../services/plans/cancel-plan";
import { annotations, defineTool } from "../define-tool";

export const cancelPlanTool = defineTool({
  name: "cancel_plan",
  title: "Cancel a plan",
  description:
    "End an unfinished plan for good, with a reason: pending reviews withdrawn, leases ended; later calls say who cancelled it and why.",
  inputSchema: cancelPlanInput,
  outputSchema: planCancelledOutput,
  annotations: annotations({ destructive: true }),
  run: cancelPlan,
});
