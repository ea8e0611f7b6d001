"use server";

import { redirect } from "next/navigation";
import { z } from "zod";
import { modifyPlan, modifyPlanInput } from "@/lib/services/plans/modify-plan";
import { serverAction } from "@/lib/web/server-action";

const RECOVERY = {
  fail_step: {
    modificationRationale: "Failed by an admin from the stalled plans page.",
    reason: "Stalled: failed by an admin.",
  },
  retry_step: { modificationRationale: "Retried by an admin from the stalled plans page." },
};

/** Fail a stalled step or retry a failed one: modify_plan's recovery actions, by an admin. */
export const recoverStepAction = serverAction({
  access: "admin",
  input: modifyPlanInput.pick({ planId: true, stepId: true }).extend({
    action: z.enum(["fail_step", "retry_step"], "choose to fail or to retry the step"),
  }),
  // The form's own confirmation that failing the last open step ends the plan.
  formOnly: ["confirmEndsPlan"],
  run: ({ ctx, input }) => modifyPlan(ctx, { ...input, ...RECOVERY[input.action] }),
  // The plan may leave this list once recovered, taking its form with it, so the
  // confirmation travels in the URL and the page states it.
  success: (result, input) =>
    redirect(`/admin/stalled?done=${input.action}&status=${result.planStatus}`),
  revalidate: (input) => `/plans/${input.planId}`,
});
