"use server";

import { z } from "zod";
import { TIMEOUT_ACTIONS } from "@/lib/plan-engine/review-deadlines";
import { setReviewDefaults } from "@/lib/services/reviews/review-defaults";
import { serverAction } from "@/lib/web/server-action";

/**
 * The form's fields, which are not the use case's: the deadline in whole
 * minutes (empty: none), and the select's action (anything else: none).
 */
const reviewDefaultsForm = z.object({
  deadlineMinutes: z
    .string()
    .trim()
    .regex(/^\d*$/, "The deadline is a whole number of minutes.")
    .optional(),
  onTimeout: z.string().optional(),
});

/** The team's default review deadline, in minutes on the form (empty: none). */
export const setReviewDefaultsAction = serverAction({
  access: "admin",
  input: reviewDefaultsForm,
  run: ({ ctx, input }) =>
    setReviewDefaults(ctx, {
      deadlineSeconds: input.deadlineMinutes ? Number(input.deadlineMinutes) * 60 : null,
      onTimeout: TIMEOUT_ACTIONS.find((action) => action === input.onTimeout) ?? null,
    }),
  success: (saved, input) =>
    saved.deadlineSeconds === null
      ? "Saved: reviews without their own deadline wait until someone answers."
      : `Saved: reviews without their own deadline get ${input.deadlineMinutes} min, then Cairn will ${saved.onTimeout}.`,
  revalidate: () => "/admin",
});
