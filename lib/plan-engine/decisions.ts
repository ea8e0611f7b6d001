/**
 * What a person's answer at a checkpoint does to the step and the plan
 * (docs/execution-loop.md).
 */
import { AppError } from "./app-error";
import type {
  DecisionChannel,
  DecisionPolicy,
  PlanStatus,
  ReviewDecision,
  StepStatus,
} from "./states";

export interface ReviewOutcome {
  /** The step's next status; always a valid move from `awaiting_input`. */
  readonly stepStatus: StepStatus;
  /** The plan's next status; always a valid move from `awaiting_review`. */
  readonly planStatus: PlanStatus;
}

const REVIEW_OUTCOMES: Readonly<Record<ReviewDecision, ReviewOutcome>> = {
  approve: { stepStatus: "completed", planStatus: "executing" },
  reject: { stepStatus: "failed", planStatus: "failed" },
  modify: { stepStatus: "in_progress", planStatus: "executing" },
  skip: { stepStatus: "skipped", planStatus: "executing" },
};

/**
 * The decision table as written. `planStatus` is the immediate move out of
 * `awaiting_review`; the plan's stored status is decided by `decideReviewDecision`
 * (review-decision.ts), since the reviewed step may have been the last open one.
 */
export function applyReviewDecision(decision: ReviewDecision): ReviewOutcome {
  return REVIEW_OUTCOMES[decision];
}

/** What `modify` puts between a step's instructions and a person's feedback. */
export const USER_FEEDBACK_MARK = "\n\n---\n\nUser feedback: ";

/**
 * `modify` appends the person's feedback to the step's instructions, after a
 * horizontal rule and a "User feedback:" prefix (docs/execution-loop.md), so
 * the AI platform re-runs the step with the original task and the new guidance
 * side by side.
 */
export function appendUserFeedback(instructions: string, feedback: string): string {
  return `${instructions}${USER_FEEDBACK_MARK}${feedback}`;
}

/** The reverse of `appendUserFeedback`: the original instructions, and each feedback in order. */
export function splitUserFeedback(instructions: string): {
  original: string;
  feedback: string[];
} {
  const [original = "", ...feedback] = instructions.split(USER_FEEDBACK_MARK);
  return { original, feedback };
}

/** Who acts, as the audit trail's actor types name them. */
export type DeciderKind = "user" | "api_key" | "oauth_app" | "system";

/**
 * How a decision by `kind` reached Cairn (shown wherever a decision is); a
 * person `inClient` answered a form their own MCP client showed them.
 */
export function decisionChannel(kind: DeciderKind, inClient = false): DecisionChannel {
  if (kind === "user") return inClient ? "client" : "web";
  if (kind === "system") return "deadline";
  return "relayed";
}

/**
 * Whether an answer given inside an MCP client (a form, a review card) is a
 * person's own (docs/reviews.md, "What proves a person was there"): only on a
 * connection a person authorized in Cairn's browser flow (a connected app,
 * whose OAuth grant they approved signed in), and only from an app the team
 * trusts. Where only people decide, that is an app the team names: a client's
 * name for itself proves nothing, and an agent CLI a person connected by
 * OAuth would otherwise pass every checkpoint as that person. Where agents
 * may relay, no list (null) trusts every connected app, as its answer would
 * count as a relay anyway. An API key proves no person: whoever holds it can
 * write the answer.
 */
export function answersAsPersonInClient(
  credential: { kind: DeciderKind; clientId?: string | undefined },
  rules: { decisionPolicy: DecisionPolicy; trustedClients: readonly string[] | null },
): boolean {
  if (credential.kind !== "oauth_app" || credential.clientId === undefined) return false;
  if (rules.trustedClients === null) return rules.decisionPolicy === "people_and_agents";
  return rules.trustedClients.includes(credential.clientId);
}

/**
 * The team's rule on who decides a checkpoint. A person always may, and Cairn
 * at a deadline a person or the team set; an agent may only relay a person's
 * answer where the team allows it. Refused, the agent is told what to do
 * instead: show its user the review page.
 */
export function checkDecider(policy: DecisionPolicy, kind: DeciderKind, reviewUrl: string): void {
  if (policy === "people_only" && decisionChannel(kind) === "relayed") {
    throw new AppError(
      "FORBIDDEN",
      `This team lets only people decide checkpoints: an agent cannot approve, reject, modify or skip a review. Show the person the review page and let them decide there: ${reviewUrl}`,
      { decisionPolicy: policy, reviewUrl },
    );
  }
}

/**
 * Whether a deadline `kind` timed, running `onTimeout`, would pass a checkpoint
 * without a person under `policy`: the one test behind a request's deadline
 * (`checkTimeoutAction`) and a deadline's firing (`timeoutActionInForce`).
 */
export function timeoutPassesWithoutPerson(
  policy: DecisionPolicy,
  kind: DeciderKind,
  onTimeout: string | undefined,
): boolean {
  return (
    policy === "people_only" &&
    decisionChannel(kind) === "relayed" &&
    (onTimeout === "approve" || onTimeout === "skip")
  );
}

/**
 * A deadline's approve or skip is a decision made in advance: an agent may not
 * grant itself one where only people decide (reject and escalate leave the
 * step to a person). Checked on the action that will actually run: the one the
 * agent named, or the team's, when the agent set the deadline's time and left
 * the action to the team (its time would still decide when the team's approve
 * runs). A deadline wholly the team's default is the team's own choice.
 */
export function checkTimeoutAction(
  policy: DecisionPolicy,
  kind: DeciderKind,
  timeout: { onTimeout: string | undefined; inheritedFromTeam: boolean },
): void {
  const { onTimeout, inheritedFromTeam } = timeout;
  if (!timeoutPassesWithoutPerson(policy, kind, onTimeout)) return;
  if (inheritedFromTeam) {
    throw new AppError(
      "FORBIDDEN",
      `deadlineSeconds/deadlineAt: this team lets only people decide checkpoints, and its action when a review's deadline passes is "${onTimeout}", so a deadline you set would ${onTimeout} the step without a person. Leave the deadline out for the team's default, or add onTimeout "escalate" or "reject".`,
      { field: "onTimeout", decisionPolicy: policy, teamOnTimeout: onTimeout },
    );
  }
  throw new AppError(
    "FORBIDDEN",
    `onTimeout: this team lets only people decide checkpoints, so an agent cannot set a deadline that would ${onTimeout} the step without them. Use "escalate" or "reject", or leave the deadline out for the team's default.`,
    { field: "onTimeout", decisionPolicy: policy },
  );
}

/**
 * A result the decider enters with the decision (docs/reviews.md, "A person
 * can always decide a checkpoint") goes only with an approve of a review that
 * has no proposal: what was reviewed is what is decided, so a proposal is
 * approved as shown or sent back with feedback, never swapped.
 */
export function checkEnteredResult(
  decision: ReviewDecision,
  proposal: { result: Record<string, unknown> | null },
  entered: Record<string, unknown> | null,
): void {
  if (entered === null) return;
  if (decision !== "approve") {
    throw new AppError(
      "VALIDATION_ERROR",
      `result: a result goes only with approve, not ${decision}. Nothing was changed; leave the result out, or approve.`,
      { field: "result" },
    );
  }
  if (proposal.result !== null) {
    throw new AppError(
      "VALIDATION_ERROR",
      "result: this review carries the agent's proposed result, and an approve completes the step with exactly that. Nothing was changed; approve without a result, or choose modify with feedback saying what should change.",
      { field: "result" },
    );
  }
}

/**
 * What an approve completes the step with: the result and confidence the agent
 * proposed and the person saw; when it proposed none, the result the decider
 * entered, else a result that records the decision (and no confidence: a
 * condition on it does not fire on a value nobody reported).
 */
export function approvedResult(
  proposal: { result: Record<string, unknown> | null; confidence: number | null },
  reviewRequestId: string,
  feedback: string | null,
  entered: Record<string, unknown> | null = null,
): { result: Record<string, unknown>; confidence: number | null } {
  if (proposal.result !== null) return { result: proposal.result, confidence: proposal.confidence };
  if (entered !== null) return { result: entered, confidence: null };
  return {
    result: { approvedByReview: reviewRequestId, ...(feedback ? { feedback } : {}) },
    confidence: proposal.confidence,
  };
}
