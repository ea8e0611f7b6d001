import { z } from "zod";
import { listActivePlans, listActivePlansInput } from "../../services/plans/list-active-plans";
import { defineTool } from "../define-tool";
import { planStatus, progress } from "../output-fields";

export const listActivePlansTool = defineTool({
  name: "list_active_plans",
  title: "List active plans",
  description:
    "List this account's plans that are not finished (planning, executing, awaiting review or stalled), most recently active first, with progress. Use it at the start of a session to offer the user a plan to resume, then call get_research_context.",
  inputSchema: listActivePlansInput,
  outputSchema: z.object({
    plans: z.array(
      z.object({
        planId: z.string(),
        name: z.string(),
        researchQuestion: z.string(),
        status: planStatus,
        progress,
        createdAt: z.string(),
        updatedAt: z.string(),
      }),
    ),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: listActivePlans,
});
