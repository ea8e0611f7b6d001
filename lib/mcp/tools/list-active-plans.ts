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
    "This account's unfinished plans, latest activity first, with progress: at a session's start, to offer one to resume (get_research_context).",
  inputSchema: listActivePlansInput,
  outputSchema: activePlansOutput,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: listActivePlans,
});
