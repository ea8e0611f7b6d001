import {
  getPlanHistory,
  getPlanHistoryInput,
  planHistoryOutput,
} from "../../services/plans/get-plan-history";
import { defineTool } from "../define-tool";

export const getPlanHistoryTool = defineTool({
  name: "get_plan_history",
  title: "Get a plan's history",
  description:
    "A plan's revisions, newest first: who, when, why, and the steps added, removed, moved or changed. modify_plan revert_revision restores one.",
  inputSchema: getPlanHistoryInput,
  outputSchema: planHistoryOutput,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: getPlanHistory,
});
