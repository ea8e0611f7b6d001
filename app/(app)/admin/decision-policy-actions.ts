"use server";

import { z } from "zod";
import { DECISION_POLICIES } from "@/lib/plan-engine/states";
import { setDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import { serverAction } from "@/lib/web/server-action";

const decisionPolicyForm = z.object({ decisionPolicy: z.enum(DECISION_POLICIES) });

/** Who may decide the team's checkpoints (docs/reviews.md). */
export const setDecisionPolicyAction = serverAction({
  access: "admin",
  input: decisionPolicyForm,
  run: ({ ctx, input }) => setDecisionPolicy(ctx, input),
  success: (saved) =>
    saved === "people_only"
      ? "Saved: only people decide checkpoints. Agents are refused and told to show the review page."
      : "Saved: people decide checkpoints, and agents may relay a person's answer (marked as relayed).",
  revalidate: () => "/admin",
});
