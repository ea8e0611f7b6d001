"use server";

import {
  type ForkedFailedPlans,
  failedPlansFilter,
  forkFailedPlans,
} from "@/lib/services/plans/fork-failed-plans";
import type { ActionItem } from "@/lib/web/action-state";
import { serverAction } from "@/lib/web/server-action";

function plans(n: number) {
  return `${n} ${n === 1 ? "plan" : "plans"}`;
}

/** The answer: how many were forked, then a line per plan, each fork linked. */
function answer(result: ForkedFailedPlans) {
  const items: ActionItem[] = [
    ...result.forked.map((fork) => ({
      text: `${fork.forkName}: forked from step ${fork.fromStepOrder} of ${fork.name}${fork.reopened ? ` (${fork.reopened})` : ""}`,
      href: `/plans/${fork.forkPlanId}`,
    })),
    ...result.refused.map((plan) => ({
      text: `${plan.name}, step ${plan.stepOrder}: not forked. ${plan.reason}`,
    })),
  ];
  const refused = result.refused.length > 0 ? `; ${plans(result.refused.length)} not forked` : "";
  const more = result.more ? "; more plans match: fork again for the next ones" : "";
  return {
    status: "success" as const,
    message: `Forked ${plans(result.forked.length)} from ${result.forked.length === 1 ? "its" : "their"} failed step${refused}${more}.`,
    items,
  };
}

/** Fork every failed plan the filter matches from its failed step: fork_plan's use case, once per plan. */
export const forkFailedPlansAction = serverAction({
  access: "admin",
  input: failedPlansFilter,
  run: ({ ctx, input }) => forkFailedPlans(ctx, input),
  success: answer,
  revalidate: () => "/admin/failed",
});
