"use server";

import { z } from "zod";
import { MAX_APPROVALS_REQUIRED } from "@/lib/plan-engine/states";
import { setReviewQuorum } from "@/lib/services/reviews/review-quorum";
import { serverAction } from "@/lib/web/server-action";

/** The form's field: the number as typed (the use case checks its range). */
const reviewQuorumForm = z.object({
  approvalsRequired: z
    .string()
    .trim()
    .regex(
      /^\d+$/,
      `The approvals a review needs is a whole number from 1 to ${MAX_APPROVALS_REQUIRED}.`,
    ),
});

/** The team's quorum: how many distinct people must approve each review (docs/reviews.md, "Quorum"). */
export const setReviewQuorumAction = serverAction({
  access: "admin",
  input: reviewQuorumForm,
  run: ({ ctx, input }) =>
    setReviewQuorum(ctx, { approvalsRequired: Number(input.approvalsRequired) }),
  success: (saved) =>
    saved === 1
      ? "Saved: one person's approval passes a review (a plan or an agent may ask for more)."
      : `Saved: reviews requested from now on need ${saved} people's approvals (a plan or an agent may ask for more, never fewer).`,
  revalidate: () => "/admin",
});
