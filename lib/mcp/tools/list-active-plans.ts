import {
  activePlansOutput,
  listActivePlans,
  listActivePlansInput,
} from "../../services/plans/list-active-plans";
import { defineTool } from "../define-tool";

export const listActivePlansTool = defineTool({
  name: "list_active_plans",
  title: "List active plans",
  description:
    "List this account's plans that are not finished (planning, executing, awaiting review or stalled), most recently active first, with progress. Use it at the start of a session to offer the user a plan to resume, then call get_research_context.",
  inputSchema: listActivePlansInput,
  outputSchema: activePlansOutput,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: listActivePlans,
});
