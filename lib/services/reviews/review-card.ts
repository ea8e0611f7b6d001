/**
 * The review card and the plan card: Cairn's MCP App views inside a chat
 * client (docs/mcp-apps.md). The cards read through these and decide through
 * submit_user_decision's use case, as the person in their client where the
 * connection proves one (the same rule as the review form), so a decision in a
 * card has the same effect and audit rows as one on the review page.
 */
import "server-only";
import { z } from "zod";
import { isSentBack } from "../../plan-engine/progress";
import { DECISION_POLICIES } from "../../plan-engine/states";
import { loadPlanEvidence, planEvidenceOutput } from "../evidence/read-evidence";
import { planStatusOutput, statusWithSteps } from "../plans/get-plan-status";
import {
  submitUserDecision,
  submitUserDecisionInput,
  userDecisionOutput,
} from "../plans/submit-user-decision";
import type { ServiceContext } from "../shared/context";
import { planIdField } from "../shared/fields";
import { getPlan } from "../shared/plan-access";
import { publicBaseUrl, reviewPageUrl } from "../shared/public-url";
import { parseInput } from "../shared/validation";
import { readPendingReview } from "../views/pending-review";
import { settleDeadlinesOfPlan } from "./deadline-state";
import { answeringInClient, inClientAnswerer } from "./in-client-trust";
import { pendingReviewView } from "./review-view";

/** How the trail names the client a card decision was made in. */
export const REVIEW_CARD_CLIENT = "Cairn's review card";

export const cardInput = z.object({ planId: planIdField });

const planUrlOf = (planId: string) => `${publicBaseUrl()}/plans/${planId}`;

export const reviewCardOutput = z.object({
  planId: z.string(),
  planName: z.string(),
  planStatus: planStatusOutput.shape.status,
  /** The review waiting for a decision; null when none waits. */
  review: pendingReviewView.nullable(),
  /** The plan's sources and claims: the card shows those up to the reviewed step. */
  evidence: planEvidenceOutput,
  reviewUrl: z.string(),
  planUrl: z.string(),
  decisionPolicy: z.enum(DECISION_POLICIES),
  /** Whether a decision made in the card counts on this connection, and why not. */
  decideHere: z.object({
    allowed: z.boolean(),
    as: z.enum(["person", "agent"]),
    reason: z.string().nullable(),
  }),
});

export type ReviewCard = z.infer<typeof reviewCardOutput>;

/** Where a decision in the card would be refused, what the card says instead. */
const NOT_HERE =
  "This team lets only people decide checkpoints, and this connection does not prove a person (an API key, or an app the team's admins have not named among its trusted apps). Decide on the review page, signed in to Cairn.";

/** The plan's pending review as the review page shows it, and whether the card may decide it. */
export async function readReviewCard(
  ctx: ServiceContext,
  raw: z.input<typeof cardInput>,
): Promise<ReviewCard> {
  const { planId } = parseInput(cardInput, raw);
  // A review whose deadline passed is applied before the card shows it, as on the page.
  await settleDeadlinesOfPlan(ctx, planId);
  // Only what the card shows: none of the plan page's other reads (its trail check above all).
  const plan = await getPlan(ctx.db, ctx, planId);
  const [review, evidence, answerer] = await Promise.all([
    readPendingReview(ctx, planId),
    loadPlanEvidence(ctx.db, ctx, planId),
    inClientAnswerer(ctx),
  ]);
  const allowed = answerer.person || answerer.decisionPolicy === "people_and_agents";
  return {
    planId,
    planName: plan.name,
    planStatus: plan.status,
    review,
    evidence,
    reviewUrl: reviewPageUrl(planId),
    planUrl: planUrlOf(planId),
    decisionPolicy: answerer.decisionPolicy,
    decideHere: {
      allowed,
      as: answerer.person ? "person" : "agent",
      reason: allowed ? null : NOT_HERE,
    },
  };
}

/** A card's decision names the review and the digest of what the card showed. */
export const cardDecisionInput = submitUserDecisionInput.safeExtend({
  contentDigest: z
    .string()
    .regex(/^[0-9a-f]{64}$/, "must be the contentDigest of the review the card shows"),
});

export const cardDecisionOutput = userDecisionOutput;

/**
 * A decision made in the review card: the person's own where the connection
 * proves one (on the team's rules as they stand in the decision's
 * transaction), else the credential's relay, refused where only people decide
 * exactly as submit_user_decision refuses it.
 */
export async function decideInReviewCard(
  ctx: ServiceContext,
  raw: z.input<typeof cardDecisionInput>,
) {
  const input = parseInput(cardDecisionInput, raw);
  return submitUserDecision(answeringInClient(ctx, REVIEW_CARD_CLIENT), input);
}

export const planCardOutput = planStatusOutput.extend({
  planUrl: z.string(),
  steps: z.array(
    planStatusOutput.shape.steps.element.extend({
      /** Sent back to the agent with a person's feedback, not picked up again yet. */
      sentBack: z.boolean(),
    }),
  ),
});

/**
 * The plan's progress for the plan card: get_plan_status's answer, which steps
 * a person sent back (the plan page shows them so too), and the plan page's link.
 */
export async function readPlanCard(
  ctx: ServiceContext,
  raw: z.input<typeof cardInput>,
): Promise<z.infer<typeof planCardOutput>> {
  const { report, steps } = await statusWithSteps(ctx, raw);
  const sentBack = new Set(steps.filter(isSentBack).map((s) => s.id));
  return {
    ...report,
    steps: report.steps.map((step) => ({ ...step, sentBack: sentBack.has(step.stepId) })),
    planUrl: planUrlOf(report.planId),
  };
}
