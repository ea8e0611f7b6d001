import { forkedPlanOutput, forkPlan, forkPlanInput } from "../../services/plans/fork-plan";
import { annotations, defineTool } from "../define-tool";

export const forkPlanTool = defineTool({
  name: "fork_plan",
  title: "Fork a plan from a step",
  description:
    "A new plan from a step of another: earlier steps carried with results, evidence and decisions; that step and later ones pending, with stepEdits; the source unchanged.",
  inputSchema: forkPlanInput,
  outputSchema: forkedPlanOutput,
  annotations: annotations(),
  run: forkPlan,
});
