/**
 * A person's decision at a checkpoint, decided on a locked snapshot: the
 * step's new status, its instructions after a modify, and for an approve the
 * completion's effects on exactly what the person saw. Every path to a
 * decision (submit_user_decision, the web, a deadline) asks this.
 */
import type { AuditEntry } from "./audit-entries";
import { checkDecisionNotHeld } from "./checkpoint-guard";
import { type CompletionEffects, completionEffects, withdrawOnEnd } from "./completion";
import {
  appendUserFeedback,
  applyReviewDecision,
  approvedResult,
  checkEnteredResult,
} from "./decisions";
import type { LoopCondition, LoopStep, PlanSnapshot } from "./plan-snapshot";
import { planStatusAfter, settledPlanStatus, statusesWhilePaused } from "./plan-status";
import type {
  DecisionChannel,
  DecisionPolicy,
  PlanStatus,
  ReviewDecision,
  StepStatus,
} from "./states";
import { isTerminalPlanStatus, transitionStep } from "./transitions";

export type ReviewEvent = {
  reviewRequestId: string;
  decision: ReviewDecision;
  feedback: string | null;
  /** What the agent asked the person to accept (request_user_review). */
  proposal: { result: Record<string, unknown> | null; confidence: number | null };
  /** The result the decider entered for a review with no proposal (`checkEnteredResult`). */
  enteredResult: Record<string, unknown> | null;
  /** How the decision reached Cairn, and the digest of what the reviewer was shown. */
  channel: DecisionChannel;
  reviewDigest: string;
  /** The team's rule on who decides when this decision was made (kept in its trail row). */
  decisionPolicy: DecisionPolicy;
  /** An approve that reached a quorum of several (`approvalQuorum`): who approved, kept in its trail row. */
  approvedBy?: readonly string[];
};

export type ReviewedStep = Omit<LoopStep, "stepType"> & {
  status: "awaiting_input";
  instructions: string;
};

export type ReviewDecisionOutcome = CompletionEffects & {
  stepStatus: StepStatus;
  instructions: string;
  failureReason: string | null;
  /** The step's result and confidence after an approve; null otherwise. */
  result: Record<string, unknown> | null;
  confidence: number | null;
};

/**
 * A person's answer at a checkpoint. `approve` completes the step with what
 * the person saw (`approvedResult`: the agent's proposal, or a record of the
 * decision) and evaluates its conditions on exactly that, as a submit would;
 * `modify` hands the step back to the agent: it is `in_progress` with no
 * holder, so the next get_next_step returns it first; `skip` skips it;
 * `reject` fails the step and the plan.
 */
export function decideReviewDecision(
  plan: PlanSnapshot,
  step: ReviewedStep,
  conditions: readonly LoopCondition[],
  event: ReviewEvent,
): ReviewDecisionOutcome {
  checkEnteredResult(event.decision, event.proposal, event.enteredResult);
  const outcome = applyReviewDecision(event.decision);
  const stepStatus = transitionStep(step.status, outcome.stepStatus);
  checkDecisionNotHeld(plan, step, event.decision);
  const instructions =
    event.decision === "modify" && event.feedback
      ? appendUserFeedback(step.instructions, event.feedback)
      : step.instructions;
  const audit: AuditEntry[] = [
    {
      eventType: "user_reviewed",
      planId: plan.id,
      stepId: step.id,
      payload: {
        action: "decision",
        reviewRequestId: event.reviewRequestId,
        decision: event.decision,
        feedback: event.feedback,
        channel: event.channel,
        reviewDigest: event.reviewDigest,
        decisionPolicy: event.decisionPolicy,
        ...(event.enteredResult !== null ? { enteredResult: event.enteredResult } : {}),
        ...(event.approvedBy ? { approvedBy: [...event.approvedBy] } : {}),
      },
    },
  ];
  const others = {
    ...plan,
    pendingReviews: plan.pendingReviews.filter((r) => r.id !== event.reviewRequestId),
  };
  if (event.decision === "approve") {
    const approved = approvedResult(
      event.proposal,
      event.reviewRequestId,
      event.feedback,
      event.enteredResult,
    );
    const effects = completionEffects(others, step.id, conditions, {
      ...approved,
      missingConfidence: "absent",
    });
    return {
      ...effects,
      audit: [...audit, ...effects.audit],
      stepStatus,
      instructions,
      failureReason: null,
      ...approved,
    };
  }
  const steps = plan.steps.map((s) => (s.id === step.id ? { ...s, status: stepStatus } : s));
  let failureReason: string | null = null;
  let planStatus: PlanStatus;
  if (event.decision === "reject") {
    failureReason = event.feedback
      ? `Rejected by reviewer: ${event.feedback}`
      : "Rejected by reviewer";
    audit.push({
      eventType: "step_failed",
      planId: plan.id,
      stepId: step.id,
      payload: {
        stepOrder: step.stepOrder,
        reason: event.feedback ?? "Rejected by reviewer",
        source: "review_reject",
      },
    });
    // A reject is one of the two ways a plan fails; the derivation alone would
    // treat the failed step as terminal and could answer `completed`.
    planStatus = planStatusAfter(plan.status, "failed");
  } else {
    planStatus = settledPlanStatus(
      plan.status,
      statusesWhilePaused(plan, steps),
      plan.awaitingSteps,
    );
  }
  const withdrawnReviewIds = withdrawOnEnd(others, planStatus, audit);
  return {
    verdicts: [],
    fired: [],
    skippedStepIds: [],
    planStatus,
    awaitingSteps: isTerminalPlanStatus(planStatus) ? null : plan.awaitingSteps,
    withdrawnReviewIds,
    audit,
    stepStatus,
    instructions,
    failureReason,
    result: null,
    confidence: null,
  };
}
