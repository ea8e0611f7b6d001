/**
 * The team's quorum (docs/reviews.md, "Quorum"): how many distinct people
 * must approve each review; a plan (create_plan) or a request
 * (request_user_review) may ask for more, never fewer. Set on the admin page
 * and with the CLI; a change is written to the team's trail (team-trail.ts).
 * A change applies to reviews requested after it: a pending review keeps the
 * number it was requested with, which its reviewers were shown.
 */
import "server-only";
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { tenants } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { MAX_APPROVALS_REQUIRED } from "../../plan-engine/states";
import type { ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import { ADMIN_CLI_ACTOR } from "./decision-policy";
import { changeTeamRule, setOwnTeamRule } from "./team-trail";

export const approvalsRequiredField = z
  .number()
  .int()
  .min(1)
  .max(MAX_APPROVALS_REQUIRED)
  .describe("People who must approve; at least the team's.");

export const reviewQuorumInput = z.strictObject({ approvalsRequired: approvalsRequiredField });

export async function getReviewQuorum(ctx: ServiceContext): Promise<number> {
  const [row] = await ctx.db
    .select({ approvalsRequired: tenants.reviewApprovalsRequired })
    .from(tenants)
    .where(eq(tenants.id, ctx.tenantId));
  return row?.approvalsRequired ?? 1;
}

export async function setReviewQuorum(
  ctx: ServiceContext,
  raw: z.input<typeof reviewQuorumInput>,
): Promise<number> {
  const input = parseInput(reviewQuorumInput, raw);
  return setOwnTeamRule(ctx, "review_quorum_changed", input.approvalsRequired);
}

/** The admin CLI's counterpart, by team name: sets the quorum when one is given, and answers it. */
export async function teamReviewQuorum(
  db: Database,
  teamName: string,
  approvalsRequired?: number,
): Promise<number> {
  const [team] = await db
    .select({ id: tenants.id, approvalsRequired: tenants.reviewApprovalsRequired })
    .from(tenants)
    .where(eq(tenants.name, teamName));
  if (!team) throw new AppError("NOT_FOUND", `No team is named "${teamName}".`);
  if (approvalsRequired === undefined) return team.approvalsRequired;
  const input = parseInput(reviewQuorumInput, { approvalsRequired });
  const change = await changeTeamRule(db, {
    tenantId: team.id,
    actor: ADMIN_CLI_ACTOR,
    eventType: "review_quorum_changed",
    to: input.approvalsRequired,
  });
  return change.to;
}

/**
 * Refuses an agent's `approvalsRequired` below the team's rule (create_plan,
 * request_user_review), so it learns its number would not hold.
 */
export function checkApprovalsAsked(team: number, asked: number | undefined): void {
  if (asked !== undefined && asked < team) {
    throw new AppError(
      "VALIDATION_ERROR",
      `approvalsRequired: this team's reviews need at least ${team} people's approvals, so ${asked} cannot hold. Nothing was stored; ask for ${team} or more, or leave approvalsRequired out for the team's rule.`,
      { field: "approvalsRequired", teamApprovalsRequired: team },
    );
  }
}

/**
 * The approvals a review needs: the largest of the team's rule as it stands,
 * the plan's and the request's (a plan's number below a rule raised since
 * gives way to it).
 */
export function approvalsRequiredOf(
  team: number,
  plan: number | null,
  request: number | undefined,
): number {
  checkApprovalsAsked(team, request);
  return Math.max(team, plan ?? 1, request ?? 1);
}
