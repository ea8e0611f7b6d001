/**
 * A review the person answers in their own MCP client (revision 2026-07-28:
 * an elicitation carried as an input request). When get_next_step finds the
 * plan waiting on a review and the request's client declared form
 * elicitation, the answer is an InputRequiredResult whose form the client
 * shows its user, with the agent's summary and proposal: approve, reject,
 * modify with feedback, or skip. A client that declared URL elicitation only
 * is asked to open the review page instead, where the person signs in and
 * decides; its retry records nothing. The form's client
 * sends get_next_step again with the answer; Cairn records it through
 * submit_user_decision's use case as a decision of the credential's user made
 * in that client (the audit actor is the person, not the key), then answers
 * get_next_step as usual. A form the person declines or cancels leaves the
 * review pending (awaiting_review, as without elicitation). Clients without
 * form elicitation, and every 2025-era client, keep the tool flow.
 */
import {
  acceptedContent,
  type InputRequiredResult,
  inputRequired,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { isAppError } from "../plan-engine/app-error";
import { REVIEW_DECISIONS } from "../plan-engine/states";
import type { ServiceContext } from "../services/shared/context";
import { reviewPageUrl } from "../services/shared/public-url";
import type { McpPrincipal } from "./request-context";
import { submitUserDecisionTool } from "./tools/submit-user-decision";

/** The input request's key, in the result and in the client's answer. */
const REVIEW_KEY = "review";

const reviewForm = z.object({
  decision: z
    .enum(REVIEW_DECISIONS)
    .describe(
      "approve: the step is done; reject: the step and the whole plan fail; modify: the agent redoes the step with your feedback; skip: skip the step.",
    ),
  feedback: z
    .string()
    .max(20_000)
    .optional()
    .describe("Your words to the agent. Required for modify; kept with any decision."),
});

/** The reserved keys of a 2026-07-28 request's `_meta` envelope that this reads. */
const envelopeSchema = z.object({
  "io.modelcontextprotocol/clientCapabilities": z
    .object({
      elicitation: z
        .object({
          form: z.object({}).loose().optional(),
          url: z.object({}).loose().optional(),
        })
        .loose()
        .optional(),
    })
    .loose()
    .optional(),
  "io.modelcontextprotocol/clientInfo": z.object({ name: z.string() }).loose().optional(),
});

export type ReviewClient = {
  /** The client's own name, for the audit trail. */
  name: string;
  /**
   * form: the client shows Cairn's form and the person's answer comes back;
   * url: the client only opens a page, so the person is sent to the review page
   * and decides there, signed in to Cairn.
   */
  mode: "form" | "url";
};

/**
 * The client of a 2026-07-28 request that can put a review before its user: it
 * declared elicitation, in form mode (an empty elicitation capability means
 * form) or else in URL mode. Undefined for every other request, 2025-era ones
 * included (no envelope).
 */
export function reviewCapableClient(envelope: unknown): ReviewClient | undefined {
  const parsed = envelopeSchema.safeParse(envelope ?? {});
  if (!parsed.success) return undefined;
  const elicitation = parsed.data["io.modelcontextprotocol/clientCapabilities"]?.elicitation;
  if (!elicitation) return undefined;
  const name = parsed.data["io.modelcontextprotocol/clientInfo"]?.name ?? "an MCP client";
  if (elicitation.form !== undefined || Object.keys(elicitation).length === 0) {
    return { name, mode: "form" };
  }
  return elicitation.url !== undefined ? { name, mode: "url" } : undefined;
}

/**
 * The context of a decision the credential's user made in their client: a
 * person's decision (the team's "people only" lets it through), recorded as
 * made in that client (the "client" channel).
 */
function personContext(ctx: ServiceContext, principal: McpPrincipal, client: ReviewClient) {
  return {
    ...ctx,
    actor: {
      type: "user" as const,
      id: principal.userId,
      label: `the user of ${principal.label}, answering in the MCP client "${client.name}"`,
      inClient: client.name,
    },
  };
}

/** The request state: the review the form showed and the digest of its content. */
function formState(review: { reviewRequestId: string; contentDigest: string }): string {
  return `${review.reviewRequestId} ${review.contentDigest}`;
}

function parseFormState(state: unknown): { reviewRequestId: string; contentDigest: string } | null {
  if (typeof state !== "string") return null;
  const [reviewRequestId, contentDigest] = state.split(" ");
  return reviewRequestId && contentDigest ? { reviewRequestId, contentDigest } : null;
}

/** The form for a pending review, to put in get_next_step's place. */
export function askForReview(
  client: ReviewClient,
  planId: string,
  review: {
    reviewRequestId: string;
    summary: string;
    contentDigest: string;
    proposedResult?: Record<string, unknown> | undefined;
    proposedConfidence?: number | undefined;
  },
  note = "",
): InputRequiredResult {
  if (client.mode === "url") {
    return inputRequired({
      inputRequests: {
        [REVIEW_KEY]: inputRequired.elicitUrl({
          message: `Cairn's research plan waits for your review: ${review.summary}\n\nOpen the review page, sign in to Cairn and decide there.`,
          url: reviewPageUrl(planId),
        }),
      },
      requestState: formState(review),
    });
  }
  const proposal = review.proposedResult
    ? `\n\nApproving completes the step with this result${review.proposedConfidence === undefined ? "" : ` (the agent's confidence: ${review.proposedConfidence})`}:\n${JSON.stringify(review.proposedResult, null, 2)}`
    : "\n\nThe agent proposed no result: approving records your decision and feedback.";
  return inputRequired({
    inputRequests: {
      [REVIEW_KEY]: inputRequired.elicit({
        mode: "form",
        message: `${note}Cairn's research plan waits for your review.\n\n${review.summary}${proposal}\n\nApprove, reject, ask for changes (modify, with feedback) or skip this step.`,
        requestedSchema: reviewForm,
      }),
    },
    // Which review the form showed, and the digest of what it showed, so the
    // answer decides that one as shown and no later one. It comes back from
    // the client unverified; at worst it names another pending review of a
    // plan this same credential may decide anyway.
    requestState: formState(review),
  });
}

export type ReviewAnswer =
  /** The request carried no answer to the form: ask when a review is pending. */
  | { kind: "none" }
  /** The person declined or cancelled, or someone decided first: do not ask again now. */
  | { kind: "settled" }
  /** The answer could not be recorded (modify without feedback): ask again with the reason. */
  | { kind: "ask_again"; note: string };

/**
 * Records the person's answer carried by a retried get_next_step, if any.
 * `planId` is the call's own argument; `reviewRequestId` is the request state.
 */
export async function recordReviewAnswer(
  ctx: ServiceContext,
  principal: McpPrincipal,
  client: ReviewClient,
  request: {
    planId: unknown;
    inputResponses: Record<string, unknown> | undefined;
    reviewRequestId: unknown;
  },
): Promise<ReviewAnswer> {
  if (request.inputResponses?.[REVIEW_KEY] === undefined) return { kind: "none" };
  // The page was offered: the person decides there, not through this answer.
  if (client.mode === "url") return { kind: "settled" };
  const answer = acceptedContent(request.inputResponses, REVIEW_KEY, reviewForm);
  const shown = parseFormState(request.reviewRequestId);
  // Without the state Cairn sent, the answer cannot be bound to what was shown.
  if (!answer || !shown) return { kind: "settled" };
  try {
    await submitUserDecisionTool.run(personContext(ctx, principal, client), {
      planId: request.planId as string,
      decision: answer.decision,
      ...(answer.feedback?.trim() ? { feedback: answer.feedback } : {}),
      reviewRequestId: shown.reviewRequestId,
      contentDigest: shown.contentDigest,
    });
    return { kind: "settled" };
  } catch (error) {
    if (isAppError(error) && error.code === "VALIDATION_ERROR") {
      return { kind: "ask_again", note: `${error.message}\n\n` };
    }
    // CONFLICT (someone decided first) and NOT_FOUND: get_next_step's own
    // answer says where the plan stands.
    if (isAppError(error)) return { kind: "settled" };
    throw error;
  }
}
