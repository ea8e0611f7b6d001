/**
 * The checkpoint rule, in one place (docs/reviews.md, "The checkpoint rule").
 * Every path to the same effect goes through these checks, in the engine and
 * in SQL alike: the hand-out's and the one-statement submit's SQL embed
 * `notHeldByCheckpoint` (lib/services/loop/leases.ts, held equal to
 * `holdsStepsAfter` by tests/use-cases/claim-rule.test.ts), and the database
 * refuses what slips past them (drizzle/0014_checkpoint_guard.sql).
 *
 * 1. No step that stands after an undecided checkpoint is handed out, run by
 *    Cairn, completed, or linked by `completesStep` (`checkNotHeldByCheckpoint`);
 *    no existing step moves from behind one to before it
 *    (`checkOrderKeepsCheckpoints`). Steps an agent adds before it are fine: the
 *    person sees them at the review.
 * 2. A checkpoint is decided only by an actor the policy in force allows
 *    (`checkCheckpointPass`: no agent passes a checkpoint by itself under
 *    `people_only`; who decides a review, `checkDecider` in decisions.ts, and
 *    a deadline's action when it fires, `timeoutActionInForce`), and a review
 *    that needs several approvals passes only on that many distinct people's,
 *    each of the content it shows now (`approvalQuorum`).
 *    A fork carries a checkpoint's decision only where it would stand today
 *    (`carriedDecisionCounts`).
 * 3. A deliverable, evidence and artifacts only where the plan's state allows
 *    (`checkPlanTakesWork`).
 *
 * tests/checkpoint-invariant.test.ts drives random sequences of every agent
 * call, decision, deadline and policy switch against a model of this rule.
 */
import { AppError } from "./app-error";
import { type DeciderKind, decisionChannel } from "./decisions";
import type {
  DecisionChannel,
  DecisionPolicy,
  PlanStatus,
  ReviewDecision,
  StepStatus,
} from "./states";

/** The step statuses of a checkpoint nobody has decided yet. */
export const UNDECIDED_CHECKPOINT_STATUSES = [
  "pending",
  "in_progress",
  "awaiting_input",
] as const satisfies readonly StepStatus[];

export type GuardStep = {
  readonly stepOrder: number;
  readonly stepType?: string;
  readonly status: StepStatus;
};

/** A checkpoint nobody has decided holds every step after it. */
export function holdsStepsAfter(step: {
  readonly stepType?: string;
  readonly status: StepStatus;
}): boolean {
  return (
    step.stepType === "checkpoint" &&
    (UNDECIDED_CHECKPOINT_STATUSES as readonly StepStatus[]).includes(step.status)
  );
}

/** The first undecided checkpoint before `stepOrder`, if any. */
export function heldBy<S extends GuardStep>(steps: readonly S[], stepOrder: number): S | undefined {
  let first: S | undefined;
  for (const step of steps) {
    if (step.stepOrder < stepOrder && holdsStepsAfter(step)) {
      if (first === undefined || step.stepOrder < first.stepOrder) first = step;
    }
  }
  return first;
}

/** What a call wants to do to a step; the refusal says it in these words. */
export type HeldEffect = "result" | "link" | "evidence" | "artifact" | "review" | "decision";

const HELD_EFFECT: Record<HeldEffect, string> = {
  result: "take no result",
  review: "cannot be put up for review",
  decision: "take no approval and no feedback",
  link: "take no linked tool call's result (nothing was run)",
  evidence: "take no evidence",
  artifact: "have no research stored against them",
};

/**
 * Rule 1: a step behind an undecided checkpoint takes nothing until a person
 * (or, where the team lets agents relay, the checkpoint's own result) decides it.
 */
export function checkNotHeldByCheckpoint(
  plan: { id: string; steps: readonly GuardStep[] },
  step: Pick<GuardStep, "stepOrder">,
  effect: HeldEffect = "result",
): void {
  const held = heldBy(plan.steps, step.stepOrder);
  if (held && effect === "decision") {
    // A person deciding a review that stands behind a checkpoint (one requested
    // before request_user_review refused that): only a skip or a reject goes.
    throw new AppError(
      "CONFLICT",
      `Step ${held.stepOrder} of plan ${plan.id} is a checkpoint nobody has decided yet, and the steps after it ${HELD_EFFECT[effect]} until then. Nothing was changed: this review can be skipped or rejected now.`,
      { checkpointStepOrder: held.stepOrder },
    );
  }
  if (held) {
    throw new AppError(
      "CONFLICT",
      `Step ${held.stepOrder} of plan ${plan.id} is a checkpoint nobody has decided yet, and the steps after it ${HELD_EFFECT[effect]} until then. Nothing was stored: keep what you have and send it again once the checkpoint is decided (the agent holding step ${held.stepOrder} puts it up with request_user_review; get_next_step hands out nothing after it until then).`,
      { checkpointStepOrder: held.stepOrder },
    );
  }
}

/** The decisions the checkpoint rule holds: approve completes the step, modify hands it out again. */
const HELD_DECISIONS: ReadonlySet<ReviewDecision> = new Set(["approve", "modify"]);

/**
 * Rule 1 for a person's decision on a review: an approve completes the step
 * and a modify hands it out again, so neither goes behind a checkpoint nobody
 * has decided (one added ahead of the step after the review was asked;
 * request_user_review refuses such a step). A skip or a reject still goes.
 * Both the decision that settles a review (`decideReviewDecision`) and an
 * approval counted toward a quorum ask this.
 */
export function checkDecisionNotHeld(
  plan: { id: string; steps: readonly GuardStep[] },
  step: Pick<GuardStep, "stepOrder">,
  decision: ReviewDecision,
): void {
  if (HELD_DECISIONS.has(decision)) checkNotHeldByCheckpoint(plan, step, "decision");
}

/** The checkpoint that refuses `decision` on a review of `step` now (`checkDecisionNotHeld`), if any. */
export function decisionHeldBy<S extends GuardStep>(
  steps: readonly S[],
  step: Pick<GuardStep, "stepOrder">,
  decision: ReviewDecision,
): S | undefined {
  return HELD_DECISIONS.has(decision) ? heldBy(steps, step.stepOrder) : undefined;
}

/**
 * Rule 1, for a change of order (reorder_steps, and so any later retry): no
 * step that stood after an undecided checkpoint, whatever its status, comes
 * before it afterwards. A failed step moved ahead and then retried would
 * otherwise be handed out (or run by Cairn) without the decision. Moving the
 * checkpoint later, past such steps, is the same move. Steps on one side may
 * change places among themselves.
 */
export function checkOrderKeepsCheckpoints(
  before: readonly (GuardStep & { readonly id: string })[],
  after: readonly { readonly id: string; readonly stepOrder: number }[],
): void {
  const orderAfter = new Map(after.map((step) => [step.id, step.stepOrder]));
  if (!before.some(holdsStepsAfter)) return;
  // Linear: walking the steps in their old order, each must come after the
  // latest undecided checkpoint that stood before it (the largest new order
  // among those is enough, since every checkpoint before it must stay before it).
  let latestCheckpointAt = Number.NEGATIVE_INFINITY;
  let latest: GuardStep | undefined;
  for (const step of [...before].sort((a, b) => a.stepOrder - b.stepOrder)) {
    const at = orderAfter.get(step.id) ?? step.stepOrder;
    if (latest && at < latestCheckpointAt) {
      throw new AppError(
        "FORBIDDEN",
        `Step ${latest.stepOrder} is a checkpoint nobody has decided yet, so step ${step.stepOrder}, which comes after it, cannot be moved ahead of it (it would be handed out without the decision). Nothing was changed. Reorder the steps on either side of the checkpoint among themselves, or have the checkpoint decided first.`,
        { stepOrder: latest.stepOrder, movedStepOrder: step.stepOrder },
      );
    }
    if (holdsStepsAfter(step) && at > latestCheckpointAt) {
      latestCheckpointAt = at;
      latest = step;
    }
  }
}

/**
 * A `checkpoint` step is a pause for a person. Where only people decide, an
 * agent cannot get past one by itself (a result, or removing or failing the
 * step): only a review a person decides completes or skips it.
 */
export function checkCheckpointPass(
  policy: DecisionPolicy,
  kind: DeciderKind,
  step: { stepOrder: number; stepType: string },
  how: "result" | "remove_step" | "fail_step",
): void {
  if (
    policy !== "people_only" ||
    decisionChannel(kind) !== "relayed" ||
    step.stepType !== "checkpoint"
  ) {
    return;
  }
  const act = how === "result" ? "complete it with a result" : `${how.replace("_step", "")} it`;
  throw new AppError(
    "FORBIDDEN",
    `Step ${step.stepOrder} is a checkpoint and this team lets only people decide checkpoints, so an agent cannot ${act}. Put it up for review instead: get_next_step hands it out, then call request_user_review for it, with your proposedResult if you have one that meets the step's outputSchema (left out, the person enters the result); a person's approve completes it, and they may also skip it.`,
    { decisionPolicy: policy, stepOrder: step.stepOrder, stepType: step.stepType },
  );
}

/** A checkpoint's last decision as a fork would carry it. */
export type CarriedDecision = {
  decision: ReviewDecision;
  channel: DecisionChannel;
  /** The content digest the decision was bound to. */
  decidedDigest: string;
  /** The same review's digest over the step as it is now (modify_plan may have rewritten it since). */
  currentDigest: string;
};

/**
 * Rule 2, for a fork (docs/history-and-forks.md): a checkpoint carried into a
 * fork counts as decided only if what was decided is unchanged (its content
 * digest). Under `people_only` it must also have been a person's approve or
 * skip: an agent's relay, a deadline's action, or a checkpoint an agent passed
 * with a result while agents could (after a person's modify, too), is decided
 * again. Otherwise the fork starts at
 * the checkpoint.
 */
export function carriedDecisionCounts(
  policy: DecisionPolicy,
  decision: CarriedDecision | null,
): boolean {
  if (decision === null) return policy !== "people_only";
  if (decision.decidedDigest !== decision.currentDigest) return false;
  if (policy !== "people_only") return true;
  // A person in Cairn or in a client the team trusted (not a relay, nor a
  // deadline) who passed it: a modify handed the step back to the agent, which
  // then completed it.
  return (
    (decision.channel === "web" || decision.channel === "client") &&
    (decision.decision === "approve" || decision.decision === "skip")
  );
}

/** What a plan is asked to take outside the loop. */
export type PlanWork = "deliverable" | "evidence" | "artifact";

const ENDED_FOR_WORK: readonly PlanStatus[] = ["failed", "cancelled"];

/**
 * Rule 3: a plan that failed or was cancelled takes no deliverable, evidence or
 * artifact (its page would show them as its work); a deliverable waits for
 * every checkpoint's decision, and evidence or an artifact for a step waits
 * while the step is held.
 */
export function checkPlanTakesWork(
  plan: { id: string; status: PlanStatus; steps: readonly GuardStep[] },
  work: PlanWork,
  step?: Pick<GuardStep, "stepOrder">,
): void {
  if (ENDED_FOR_WORK.includes(plan.status)) {
    throw new AppError(
      "INVALID_TRANSITION",
      `Plan ${plan.id} is ${plan.status}, so it takes no ${work === "artifact" ? "research" : work}; nothing was stored. Call get_research_context to see why it ended.`,
      { planStatus: plan.status },
    );
  }
  if (work === "deliverable") {
    const waiting = heldBy(plan.steps, Number.POSITIVE_INFINITY);
    if (waiting) {
      throw new AppError(
        "CONFLICT",
        `Step ${waiting.stepOrder} of plan ${plan.id} is a checkpoint nobody has decided yet, so the plan takes no deliverable until a person decides it; nothing was stored. Keep the deliverable and store it again after the decision (get_next_step says when).`,
        { checkpointStepOrder: waiting.stepOrder },
      );
    }
    return;
  }
  if (step) checkNotHeldByCheckpoint(plan, step, work);
}

/** One person's approval of a review, as kept (`review_approval`). */
export type Approval = {
  /** The person: a signed-in user, or the user behind a relaying credential. */
  readonly approverId: string;
  readonly label: string;
  readonly channel: DecisionChannel;
  /** The digest of what they approved. */
  readonly digest: string;
};

/** What one approve does to a review that needs `required` distinct approvals. */
export type QuorumOutcome = {
  /** The approvals that count, this one included when it counts, oldest first. */
  readonly counted: readonly Approval[];
  readonly required: number;
  /** Enough approvals: this approve decides the review. */
  readonly reached: boolean;
  /** This person's approval of the same content already counted: nothing to write. */
  readonly repeat: boolean;
  /** Whether this approval counts at all (a relayed one does not under people_only). */
  readonly counts: boolean;
};

/** Whether a kept approval counts for a review as it stands: its content now, the policy in force. */
function stillCounts(
  review: { digest: string; policy: DecisionPolicy },
  approval: Approval,
): boolean {
  return (
    approval.digest === review.digest &&
    approval.channel !== "deadline" &&
    !(review.policy === "people_only" && approval.channel === "relayed")
  );
}

/** The approvals that count, one per person, oldest first, leaving out `except`'s. Linear. */
export function countedApprovals(
  review: { digest: string; policy: DecisionPolicy },
  approvals: readonly Approval[],
  except?: string,
): Approval[] {
  const seen = new Set<string>();
  const counted: Approval[] = [];
  for (const a of approvals) {
    if (!stillCounts(review, a) || seen.has(a.approverId) || a.approverId === except) continue;
    seen.add(a.approverId);
    counted.push(a);
  }
  return counted;
}

/**
 * Rule 2, for a review that needs several approvals (docs/reviews.md,
 * "Quorum"): it passes on the approvals of `required` distinct people, each
 * bound to the content the review shows now (an approval of content that has
 * changed since does not count); one person counts once, whatever the channel;
 * under people_only an agent's relay counts for nobody. A deadline's approve
 * is Cairn's decision made in advance (its action the policy in force allows)
 * and decides at once, as a reject, modify or skip by anyone does: those are
 * not approvals and are not counted.
 */
export function approvalQuorum(
  review: { required: number; digest: string; policy: DecisionPolicy },
  earlier: readonly Approval[],
  approval: Approval,
): QuorumOutcome {
  const counts = stillCounts(review, approval);
  const counted = countedApprovals(review, earlier, approval.approverId);
  const repeat =
    counts && earlier.some((a) => a.approverId === approval.approverId && stillCounts(review, a));
  if (counts) counted.push(approval);
  return {
    counted,
    required: review.required,
    reached: approval.channel === "deadline" || (counts && counted.length >= review.required),
    repeat,
    counts,
  };
}
