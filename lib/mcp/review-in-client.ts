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
 * submit_user_decision's use case, then answers get_next_step as usual. A form
 * the person declines or cancels leaves the review pending (awaiting_review,
 * as without elicitation). Clients without form elicitation, and every
 * 2025-era client, keep the tool flow.
 *
 * Whose answer it is (docs/reviews.md, "What proves a person was there"): on a
 * connected app a person authorized in Cairn's browser flow and the team
 * trusts (where only people decide, one its admins named), the credential's user's own,
 * made in that client (the audit actor is the person); on an API key, the
 * key's relay of an answer, which the team's rule on relays governs. Where only
 * people decide, such a client is never shown the form: it is sent to the
 * review page (URL mode), or, without URL elicitation, left to the tool flow.
 * The form's request state is signed with the server's secret for the
 * credential it was shown to (`reviewFormState`), so an answer to a form
 * Cairn never sent, or sent to another credential, records nothing.
 */
import {
  acceptedContent,
  createRequestStateCodec,
  type InputRequiredResult,
  inputRequired,
  type RequestStateCodec,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { isAppError } from "../plan-engine/app-error";
import { REVIEW_DECISIONS } from "../plan-engine/states";
import { submitUserDecision } from "../services/plans/submit-user-decision";
import { answeringInClient, inClientAnswerer } from "../services/reviews/in-client-trust";
import type { ServiceContext } from "../services/shared/context";
import { reviewPageUrl } from "../services/shared/public-url";
import { principalOf } from "./request-context";

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

/**
 * The reserved keys of a 2026-07-28 request's `_meta` envelope that this reads.
 * The revision key is what makes it an envelope: the SDK serves a request
 * without it on the 2025 era yet still lifts the other reserved keys it
 * carries, and a stateless 2025 exchange can carry no form, whatever those say.
 */
const envelopeSchema = z.object({
  "io.modelcontextprotocol/protocolVersion": z.string(),
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

/** What a 2026-07-28 request's client declared it can show its user. */
export type DeclaredReviewClient = {
  /** The client's own name, for the audit trail. */
  name: string;
  form: boolean;
  url: boolean;
};

export type ReviewClient = {
  name: string;
  /**
   * form: the client shows Cairn's form and the person's answer comes back;
   * url: the client only opens a page, so the person is sent to the review page
   * and decides there, signed in to Cairn.
   */
  mode: "form" | "url";
  /** Whose answer the form's is: the person's own, or the credential's relay of one. */
  answersAs: "person" | "agent";
};

/**
 * The client of a 2026-07-28 request that can put a review before its user: it
 * declared elicitation, in form mode (an empty elicitation capability means
 * form) or in URL mode. Undefined for every other request, 2025-era ones
 * included (no envelope, or reserved keys without the revision that claims one).
 */
export function reviewCapableClient(envelope: unknown): DeclaredReviewClient | undefined {
  const parsed = envelopeSchema.safeParse(envelope ?? {});
  if (!parsed.success) return undefined;
  const elicitation = parsed.data["io.modelcontextprotocol/clientCapabilities"]?.elicitation;
  if (!elicitation) return undefined;
  const name = parsed.data["io.modelcontextprotocol/clientInfo"]?.name ?? "an MCP client";
  const form = elicitation.form !== undefined || Object.keys(elicitation).length === 0;
  const url = elicitation.url !== undefined;
  return form || url ? { name, form, url } : undefined;
}

/**
 * How the review is put before this client's user, if at all: the form where
 * its answer counts (a person's own, or a relay the team allows), else the
 * review page where only people decide, or the tool flow when the client
 * cannot open a page either.
 */
export async function reviewClientFor(
  ctx: ServiceContext,
  declared: DeclaredReviewClient,
): Promise<ReviewClient | undefined> {
  const answerer = await inClientAnswerer(ctx);
  const answersAs = answerer.person ? "person" : "agent";
  if (answersAs === "agent" && answerer.decisionPolicy === "people_only") {
    return declared.url ? { name: declared.name, mode: "url", answersAs } : undefined;
  }
  return { name: declared.name, mode: declared.form ? "form" : "url", answersAs };
}

/** What a form showed: the review and the digest of its content. */
const shownReview = z.object({ reviewRequestId: z.uuid(), contentDigest: z.string() });
type ShownReview = z.infer<typeof shownReview>;

/** How long a person may take over the form before its answer no longer counts. */
const FORM_STATE_TTL_SECONDS = 60 * 60;

let codec: RequestStateCodec<ShownReview> | undefined;

/**
 * The form's request state, signed with the server's secret (lib/startup.ts
 * resolves AUTH_SECRET before any request is served; every instance shares it)
 * and bound to the credential the form was shown to: an answer to a form Cairn
 * never sent, or sent to another credential, is refused by the SDK before any
 * handler runs (-32602).
 */
export function reviewFormState(): RequestStateCodec<ShownReview> {
  if (codec) return codec;
  const key = process.env.AUTH_SECRET;
  if (!key) throw new Error("AUTH_SECRET is not set: lib/startup.ts sets it at start.");
  codec = createRequestStateCodec<ShownReview>({
    key,
    ttlSeconds: FORM_STATE_TTL_SECONDS,
    bind: (ctx) => {
      const principal = principalOf(ctx.http?.authInfo);
      return principal ? `${principal.kind}:${principal.credentialId}` : "";
    },
  });
  return codec;
}

/** The form for a pending review, to put in get_next_step's place. */
export async function askForReview(
  requestCtx: ServerContext,
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
): Promise<InputRequiredResult> {
  const shown = { reviewRequestId: review.reviewRequestId, contentDigest: review.contentDigest };
  // Which review the form showed, and the digest of what it showed, so the
  // answer decides that one as shown and no later one.
  const requestState = await reviewFormState().mint(shown, requestCtx);
  if (client.mode === "url") {
    return inputRequired({
      inputRequests: {
        [REVIEW_KEY]: inputRequired.elicitUrl({
          message: `Cairn's research plan waits for your review: ${review.summary}\n\nOpen the review page, sign in to Cairn and decide there.`,
          url: reviewPageUrl(planId),
        }),
      },
      requestState,
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
    requestState,
  });
}

/** Whether a retried request carries an answer to Cairn's review form. */
export function carriesReviewAnswer(inputResponses: Record<string, unknown> | undefined): boolean {
  return inputResponses?.[REVIEW_KEY] !== undefined;
}

export type ReviewAnswer =
  /** The request carried no answer to the form: ask when a review is pending. */
  | { kind: "none" }
  /** The person declined or cancelled, or someone decided first: do not ask again now. */
  | { kind: "settled" }
  /** The answer could not be recorded (modify without feedback): ask again with the reason. */
  | { kind: "ask_again"; note: string };

/**
 * Records the answer carried by a retried get_next_step, if any: the person's
 * own on a connection that proves one, else the credential's relay (which the
 * team's rule may refuse). `planId` is the call's own argument; `requestState`
 * is the payload Cairn signed when it showed the form, as the SDK verified it.
 */
export async function recordReviewAnswer(
  ctx: ServiceContext,
  client: ReviewClient | undefined,
  request: {
    planId: unknown;
    inputResponses: Record<string, unknown> | undefined;
    requestState: unknown;
  },
): Promise<ReviewAnswer> {
  if (!carriesReviewAnswer(request.inputResponses)) return { kind: "none" };
  // No form is shown to this client (only people decide, and it proves none),
  // or the page was offered: the person decides there, not through this answer.
  if (client?.mode !== "form") return { kind: "settled" };
  const answer = acceptedContent(request.inputResponses, REVIEW_KEY, reviewForm);
  // The SDK verified the state Cairn signed for this credential before this
  // ran; without one, no form of Cairn's was answered and nothing is recorded.
  const shown = shownReview.safeParse(request.requestState);
  if (!answer || !shown.success) return { kind: "settled" };
  try {
    // Whose answer it is, the decision's transaction decides on the team's rules as they stand then.
    await submitUserDecision(answeringInClient(ctx, client.name), {
      planId: request.planId as string,
      decision: answer.decision,
      ...(answer.feedback?.trim() ? { feedback: answer.feedback } : {}),
      reviewRequestId: shown.data.reviewRequestId,
      contentDigest: shown.data.contentDigest,
    });
    return { kind: "settled" };
  } catch (error) {
    if (isAppError(error) && error.code === "VALIDATION_ERROR") {
      return { kind: "ask_again", note: `${error.message}\n\n` };
    }
    // CONFLICT (someone decided first), FORBIDDEN (the team's rule changed
    // since the form was shown) and NOT_FOUND: get_next_step's own answer
    // says where the plan stands.
    if (isAppError(error)) return { kind: "settled" };
    throw error;
  }
}
