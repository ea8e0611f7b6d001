/**
 * The team's default review deadline (docs/reviews.md): used by
 * request_user_review when the agent names none. Both parts or neither: a
 * deadline needs the action Cairn takes when it passes. A change is written to
 * the team's trail (team-trail.ts).
 */
import "server-only";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { tenants } from "../../db/schema";
import { MAX_DEADLINE_SECONDS, TIMEOUT_ACTIONS } from "../../plan-engine/review-deadlines";
import type { ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import { setOwnTeamRule } from "./team-trail";

export const reviewDefaultsInput = z
  .object({
    deadlineSeconds: z.number().int().min(1).max(MAX_DEADLINE_SECONDS).nullable(),
    onTimeout: z.enum(TIMEOUT_ACTIONS).nullable(),
  })
  .refine((input) => (input.deadlineSeconds === null) === (input.onTimeout === null), {
    message: "give both a deadline and what Cairn does when it passes, or neither",
    path: ["onTimeout"],
  });

export type ReviewDefaults = z.output<typeof reviewDefaultsInput>;

export async function getReviewDefaults(ctx: ServiceContext): Promise<ReviewDefaults> {
  const [row] = await ctx.db
    .select({ deadlineSeconds: tenants.reviewDeadlineSeconds, onTimeout: tenants.reviewOnTimeout })
    .from(tenants)
    .where(eq(tenants.id, ctx.tenantId));
  return row ?? { deadlineSeconds: null, onTimeout: null };
}

export async function setReviewDefaults(
  ctx: ServiceContext,
  raw: z.input<typeof reviewDefaultsInput>,
): Promise<ReviewDefaults> {
  return setOwnTeamRule(ctx, "review_defaults_changed", parseInput(reviewDefaultsInput, raw));
}
