/**
 * The loop's rules as pure decisions, in the style of a state machine's
 * `transition(state, event) -> [next, effects]`: each function takes a snapshot
 * of the plan (as read by the service) and the event, and returns every write
 * and every audit entry, or throws the AppError the caller should see. The
 * services only read, ask and write (docs/protocol.md, "The loop").
 *
 * Used by submit_step_result (`decideSubmit`) and by a reviewer's approve,
 * by every review decision (`decideReviewDecision`), and by modify_plan
 * (`decidePlanStatusAfterModify`).
 */
import { AppError } from "./app-error";
import type { AuditEntry } from "./audit-entries";
import { type BranchAction, evaluateBranching, stepsToSkip } from "./branch-actions";
import { checkNotHeldByCheckpoint } from "./checkpoint-guard";
import { buildConditionContext } from "./conditions";
import {
  appendUserFeedback,
  applyReviewDecision,
  approvedResult,
  checkEnteredResult,
} from "./decisions";
import {
  type DecisionChannel,
  type DecisionPolicy,
  type PlanStatus,
  type ReviewDecision,
  type StepStatus,
  type StepType,
  TERMINAL_STEP_STATUSES,
} from "./states";
import {
  canTransitionPlan,
  derivePlanStatus,
  isTerminalPlanStatus,
  isTerminalStepStatus,
  planTransitionPath,
  transitionStep,
} from "./transitions";

export type LoopStep = {
  id: string;
  stepOrder: number;
  status: StepStatus;
  /** The step's type: a branch never skips a `checkpoint`, and an undecided one holds the steps after it. */
  stepType: StepType;
};

export type LoopCondition = {
  id: string;
  conditionExpression: string;
  ifTrueAction: string;
  actionParams: Record<string, unknown>;
};

/** A fired `add_steps` the agent has not acted on yet (stored on the plan row). */
export type AwaitingSteps = {
  conditionId: string;
  conditionExpression: string;
  stepId: string;
  stepOrder: number;
  params: Record<string, unknown>;
};

export type PlanSnapshot = {
  id: string;
  status: PlanStatus;
  awaitingSteps: AwaitingSteps | null;
  /** Every step of the plan, in any order. */
  steps: readonly LoopStep[];
  /** The plan's reviews still waiting for a person. */
  pendingReviews: readonly { id: string; stepId: string }[];
  /** The server-run step whose tool failed and on which the plan is paused, if any. */
  pausedOnFailedStepId?: string | null;
};

export type FiredCondition = {
  conditionId: string;
  conditionExpression: string;
  action: BranchAction["type"];
  skippedStepIds?: string[];
  addStepsParams?: Record<string, unknown>;
};

/** The effects of a step completing: its conditions, the skips, the plan's status. */
export type CompletionEffects = {
  verdicts: { id: string; fired: boolean }[];
  fired: FiredCondition[];
  skippedStepIds: string[];
  planStatus: PlanStatus;
  awaitingSteps: AwaitingSteps | null;
  withdrawnReviewIds: string[];
  audit: AuditEntry[];
};

/**
 * Whether `stepId` is the plan's last open step: every other step has ended,
 * so a decision that ends it (approve, skip, reject) ends the plan. The review
 * panel warns of that before the person decides.
 */
export function isLastOpenStep(steps: readonly Pick<LoopStep, "id" | "status">[], stepId: string) {
  return steps.every((s) => s.id === stepId || isTerminalStepStatus(s.status));
}

/**
 * The status a plan moves to through valid transitions only (a plan that is
 * `planning`, `stalled` or `awaiting_review` resumes to `executing` first);
 * throws INVALID_TRANSITION when no valid path leads to `to`.
 */
export function planStatusAfter(from: PlanStatus, to: PlanStatus): PlanStatus {
  return planTransitionPath(from, to).at(-1) ?? from;
}

/**
 * The plan's status implied by its steps, with Cairn's one addition to the
 * derivation: a plan waiting for the agent to act on a fired `add_steps` does
 * not complete while it waits.
 */
export function settledPlanStatus(
  from: PlanStatus,
  stepStatuses: readonly StepStatus[],
  awaitingSteps: AwaitingSteps | null,
): PlanStatus {
  const derived = derivePlanStatus(stepStatuses);
  return planStatusAfter(from, derived === "completed" && awaitingSteps ? "executing" : derived);
}

/**
 * The step statuses as the plan's status is derived from them. A pause holds:
 * the server-run step whose tool failed still counts as open while the plan is
 * paused on it, so no other step's result or review completes the plan around
 * it. The pause is answered by its suggested call, a retry, a submit for that
 * step or a cancel (docs/state-machines.md, "A pause holds").
 */
export function statusesWhilePaused(
  plan: Pick<PlanSnapshot, "pausedOnFailedStepId">,
  steps: readonly LoopStep[],
): StepStatus[] {
  return steps.map((s) =>
    s.id === plan.pausedOnFailedStepId && s.status === "failed" ? "pending" : s.status,
  );
}

/** Withdraws the pending reviews of a plan that has just ended. */
function withdrawOnEnd(
  plan: PlanSnapshot,
  planStatus: PlanStatus,
  audit: AuditEntry[],
  except?: string,
): string[] {
  if (!isTerminalPlanStatus(planStatus)) return [];
  const withdrawn = plan.pendingReviews.filter((review) => review.id !== except);
  for (const review of withdrawn) {
    audit.push({
      eventType: "user_reviewed",
      planId: plan.id,
      stepId: review.stepId,
      payload: {
        action: "review_withdrawn",
        reviewRequestId: review.id,
        reason: `The plan ${planStatus} before anyone answered.`,
      },
    });
  }
  return withdrawn.map((review) => review.id);
}

/**
 * What follows from `stepId` reaching `completed` (the step itself is written
 * by the caller): its conditions are evaluated in stored order against the
 * step's result, `skip_to` skips the pending steps up to its target, `fail`
 * fails the plan, `add_steps` keeps the plan from completing underneath the
 * agent when this was its last open step, and the plan's status follows.
 */
export function completionEffects(
  plan: PlanSnapshot,
  stepId: string,
  conditions: readonly LoopCondition[],
  outcome: {
    result: Record<string, unknown>;
    confidence: number | null;
    missingConfidence?: "zero" | "absent";
  },
): CompletionEffects {
  const step = plan.steps.find((s) => s.id === stepId);
  if (!step) throw new AppError("INTERNAL_ERROR", `Step ${stepId} is not in the snapshot.`);
  const audit: AuditEntry[] = [];
  const steps = plan.steps.map((s) =>
    s.id === stepId ? { ...s, status: "completed" as const } : s,
  );
  const branching = evaluateBranching(
    conditions,
    buildConditionContext({
      confidence: outcome.confidence,
      result: outcome.result,
      missingConfidence: outcome.missingConfidence ?? "zero",
    }),
  );
  const firedIds = new Set(branching.fired.map((fired) => fired.conditionId));
  // Conditions after a `fail` are not evaluated: they keep a null verdict.
  const lastEvaluated = branching.planFailed
    ? conditions.findIndex((c) => c.id === branching.fired.at(-1)?.conditionId)
    : conditions.length - 1;
  const verdicts = conditions
    .slice(0, lastEvaluated + 1)
    .map((c) => ({ id: c.id, fired: firedIds.has(c.id) }));

  const fired: FiredCondition[] = [];
  const skippedStepIds: string[] = [];
  let awaitingSteps = plan.awaitingSteps;
  let failure: string | undefined;
  for (const { conditionId, action } of branching.fired) {
    const condition = conditions.find((c) => c.id === conditionId);
    const conditionExpression = condition?.conditionExpression ?? "";
    const entry: FiredCondition = { conditionId, conditionExpression, action: action.type };
    if (action.type === "skip_to") {
      const skip = stepsToSkip(steps, stepId, action.targetStepId);
      const skipped = transitionStep("pending", "skipped");
      for (const [index, s] of steps.entries()) {
        if (skip.includes(s.id)) steps[index] = { ...s, status: skipped };
      }
      skippedStepIds.push(...skip);
      entry.skippedStepIds = skip;
      if (skip.length > 0) {
        audit.push({
          eventType: "plan_modified",
          planId: plan.id,
          stepId,
          payload: {
            action: "branch_skipped_steps",
            conditionId,
            targetStepId: action.targetStepId,
            skippedStepIds: skip,
          },
        });
      }
    } else if (action.type === "add_steps") {
      entry.addStepsParams = { ...action.params };
      awaitingSteps = {
        conditionId,
        conditionExpression,
        stepId,
        stepOrder: step.stepOrder,
        params: { ...action.params },
      };
    } else if (action.type === "fail") {
      failure = action.reason ?? `condition "${conditionExpression}" held`;
      audit.push({
        eventType: "plan_modified",
        planId: plan.id,
        stepId,
        payload: { action: "branch_failed_plan", conditionId, reason: failure },
      });
    }
    fired.push(entry);
  }
  const statuses = statusesWhilePaused(plan, steps);
  // A fired add_steps holds the plan's hand-outs until the agent adds the steps
  // (modify_plan add_steps) or says none are needed (decline_add_steps), even
  // with steps left: otherwise get_next_step hands out the next one and the
  // added steps land after work already under way.
  const paused = plan.steps.find((s) => s.id === plan.pausedOnFailedStepId);
  if (failure !== undefined && paused && paused.id !== stepId) {
    // A pause holds against a failure too: the plan does not end around it.
    throw new AppError(
      "CONFLICT",
      `Plan ${plan.id} is paused on step ${paused.stepOrder}, whose tool failed, and a branching condition of this step ("${failure}") would fail the plan around that pause. Nothing was changed. Answer the pause first (its suggested call, retry_step, or cancel_plan), then send this again.`,
      { pausedStepId: paused.id },
    );
  }
  const planStatus =
    failure !== undefined
      ? planStatusAfter(plan.status, "failed")
      : settledPlanStatus(plan.status, statuses, awaitingSteps);
  const withdrawnReviewIds = withdrawOnEnd(plan, planStatus, audit);
  return {
    verdicts,
    fired,
    skippedStepIds,
    planStatus,
    awaitingSteps: isTerminalPlanStatus(planStatus) ? null : awaitingSteps,
    withdrawnReviewIds,
    audit,
  };
}

export type SubmitEvent = {
  stepId: string;
  result: Record<string, unknown>;
  resultSummary: string | null;
  confidence: number | null;
};

export type SubmitDecision = CompletionEffects & {
  step: LoopStep;
  autoStarted: boolean;
};

/**
 * submit_step_result. Only a pending (the timing edge case: started here, with
 * its `step_started` row) or in-progress step takes a result. A step that is
 * already completed is a CONFLICT: exactly one result is ever accepted, also
 * when a step was handed out twice because its first lease ran out.
 */
export function decideSubmit(
  plan: PlanSnapshot,
  conditions: readonly LoopCondition[],
  event: SubmitEvent,
): SubmitDecision {
  const step = plan.steps.find((s) => s.id === event.stepId);
  if (!step) {
    throw new AppError(
      "NOT_FOUND",
      `Plan ${plan.id} has no step ${event.stepId}. Call get_research_context to see the plan's steps and their ids.`,
      { planId: plan.id, stepId: event.stepId },
    );
  }
  if (step.status === "completed") {
    throw new AppError(
      "CONFLICT",
      `Step ${step.stepOrder} is already completed: a result for it was accepted first (it may have been handed out again after its lease ran out). Your result was not stored. Call get_next_step for the step to work on now.`,
      { stepStatus: step.status },
    );
  }
  if (isTerminalPlanStatus(plan.status)) {
    throw new AppError(
      "INVALID_TRANSITION",
      `Plan ${plan.id} is ${plan.status}, so no step result can be submitted. Call get_next_step to see what to do next.`,
      { planStatus: plan.status },
    );
  }
  checkNotHeldByReview(plan, step);
  checkNotHeldByCheckpoint(plan, step);
  // A server-run step whose tool failed: the agent's result finishes it (the
  // paused plan's documented way on), through the retry path failed -> pending.
  const retried = step.status === "failed" && plan.pausedOnFailedStepId === step.id;
  if (step.status !== "in_progress" && step.status !== "pending" && !retried) {
    throw new AppError(
      "INVALID_TRANSITION",
      `Step ${step.stepOrder} is ${step.status}, so it cannot take a result (only a pending or in-progress step can). ` +
        (step.status === "awaiting_input"
          ? "It is waiting for a person's review; call get_next_step later."
          : "Call get_next_step for the step to work on now."),
      { entity: "step", from: step.status, to: "completed" },
    );
  }
  const from = retried ? transitionStep("failed", "pending") : step.status;
  const autoStarted = from === "pending";
  const completed = transitionStep(
    autoStarted ? transitionStep("pending", "in_progress") : from,
    "completed",
  );
  const audit: AuditEntry[] = [];
  if (retried) {
    audit.push({
      eventType: "plan_modified",
      planId: plan.id,
      stepId: step.id,
      payload: {
        action: "retry_step",
        modificationRationale:
          "The agent submitted the result of a server-run step whose tool failed.",
      },
    });
  }
  if (autoStarted) {
    audit.push({
      eventType: "step_started",
      planId: plan.id,
      stepId: step.id,
      payload: {
        stepOrder: step.stepOrder,
        planStatusBefore: plan.status,
        attempt: 1,
        autoStarted: true,
      },
    });
  }
  audit.push({
    eventType: "step_completed",
    planId: plan.id,
    stepId: step.id,
    payload: {
      stepOrder: step.stepOrder,
      confidence: event.confidence,
      resultSummary: event.resultSummary,
      autoStarted,
    },
  });
  const effects = completionEffects(plan, step.id, conditions, {
    result: event.result,
    confidence: event.confidence,
  });
  return {
    ...effects,
    audit: [...audit, ...effects.audit],
    step: { ...step, status: completed },
    autoStarted,
  };
}

/**
 * A waiting review holds the steps after it: while a person has not decided
 * the review of step N, no step after N takes a result (the person's decision
 * may change what comes next: reject ends the plan, modify redoes step N).
 * Steps before it, still held by other agents, go on.
 */
export function checkNotHeldByReview(
  plan: Pick<PlanSnapshot, "id" | "pendingReviews"> & {
    steps: readonly Pick<LoopStep, "id" | "stepOrder">[];
  },
  step: Pick<LoopStep, "stepOrder">,
): void {
  for (const review of plan.pendingReviews) {
    const reviewed = plan.steps.find((s) => s.id === review.stepId);
    if (reviewed && reviewed.stepOrder < step.stepOrder) {
      throw new AppError(
        "CONFLICT",
        `Plan ${plan.id} waits for a person's decision on review ${review.id} of step ${reviewed.stepOrder}, and the steps after it take no result until then. Nothing was stored or run: keep your result and send it again after the decision (get_next_step answers awaiting_review until then).`,
        { reviewRequestId: review.id, reviewedStepOrder: reviewed.stepOrder },
      );
    }
  }
}

/**
 * request_user_review: whether the step may be put up for review (a stalled
 * plan resumes on the way to `awaiting_review`). Only the step in progress of an executing plan can be put
 * up for review, and not while the plan is paused on a server-run step: the
 * pause is the agent's to answer, and a review decided around it could leave
 * neither the decision nor the pause's own calls accepted.
 */
export function decideReviewRequest(
  plan: Pick<PlanSnapshot, "id" | "status"> & {
    pause: { stepOrder: number; suggestedTool: string } | null;
  },
  step: Pick<LoopStep, "stepOrder" | "status">,
): void {
  if (!(plan.status === "stalled" || canTransitionPlan(plan.status, "awaiting_review"))) {
    throw new AppError(
      "INVALID_TRANSITION",
      `Plan ${plan.id} is ${plan.status}; a review can only be requested while it is executing.` +
        (plan.status === "awaiting_review"
          ? " A review is already pending: wait for the person's decision."
          : plan.status === "planning"
            ? " Call get_next_step to start a step first."
            : ""),
      { entity: "plan", from: plan.status, to: "awaiting_review" },
    );
  }
  if (plan.pause) {
    throw new AppError(
      "CONFLICT",
      `Plan ${plan.id} is paused on server-run step ${plan.pause.stepOrder}, so no review can be requested now. Nothing was changed. Answer the pause first with the call get_next_step suggests in pauseReason (${plan.pause.suggestedTool}), or modify_plan retry_step on that step, then request the review again.`,
      { pausedStepOrder: plan.pause.stepOrder },
    );
  }
  if (step.status !== "in_progress") {
    throw new AppError(
      "INVALID_TRANSITION",
      `Step ${step.stepOrder} is ${step.status}; only the step in progress can be put up for review. ` +
        (step.status === "pending"
          ? "Call get_next_step to start it first."
          : "Request the review for the step you are working on."),
      { entity: "step", from: step.status, to: "awaiting_input" },
    );
  }
}

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

/**
 * modify_plan's effect on the plan's status, decided from the steps as they
 * are after the change. A `planning` plan stays so until a step starts; a
 * change that leaves the plan with no steps is refused (a plan always keeps at
 * least one step; fail_step ends a step instead); add_steps and
 * decline_add_steps end the wait on a fired `add_steps`.
 */
export function decidePlanStatusAfterModify(
  plan: Pick<PlanSnapshot, "id" | "status" | "awaitingSteps">,
  action: string,
  stepStatusesAfter: readonly StepStatus[],
): { planStatus: PlanStatus; awaitingSteps: AwaitingSteps | null } {
  if (stepStatusesAfter.length === 0) {
    throw new AppError(
      "VALIDATION_ERROR",
      `That would leave plan ${plan.id} with no steps; a plan keeps at least one. Add the replacement step first (add_steps), or end the step with fail_step.`,
      { action },
    );
  }
  const awaitingSteps =
    action === "add_steps" || action === "decline_add_steps" ? null : plan.awaitingSteps;
  if (plan.status === "planning" && stepStatusesAfter.every((status) => status === "pending")) {
    return { planStatus: "planning", awaitingSteps };
  }
  return {
    planStatus: settledPlanStatus(plan.status, stepStatusesAfter, awaitingSteps),
    awaitingSteps,
  };
}

/**
 * The loop's common submit decided before its read, so that one guarded
 * statement can write it: an in-progress step without branching conditions, of
 * an `executing` plan that waits on no add_steps. Then the outcome depends on
 * the other steps only through `derivePlanStatus`, so the plan's next status is
 * decided here for each of its three cases, by `decideSubmit` itself on a
 * representative snapshot; the statement picks the case from the stored steps
 * and writes nothing when a precondition fails (the caller then decides on a
 * full snapshot). The audit rows' `stepOrder` is read by the statement.
 */
export function decideCommonSubmit(
  planId: string,
  event: SubmitEvent,
): {
  audit: AuditEntry[];
  planStatusWhen: {
    othersAwaitInput: PlanStatus;
    othersAllTerminal: PlanStatus;
    otherwise: PlanStatus;
  };
  preconditions: {
    planStatus: PlanStatus;
    stepStatus: StepStatus;
    terminalStepStatuses: readonly StepStatus[];
  };
} {
  const decide = (others: StepStatus[]) =>
    decideSubmit(
      {
        id: planId,
        status: "executing",
        awaitingSteps: null,
        steps: [
          // Never a checkpoint, and none held: the statement checks both.
          { id: event.stepId, stepOrder: 0, status: "in_progress", stepType: "search" },
          ...others.map((status, i) => ({
            id: `other-${i}`,
            stepOrder: i + 1,
            status,
            stepType: "search" as const,
          })),
        ],
        pendingReviews: [],
      },
      [],
      event,
    );
  const otherwise = decide(["pending"]);
  return {
    audit: otherwise.audit.map((entry) => {
      if (entry.eventType !== "step_completed") return entry;
      const { stepOrder: _decidedByTheStatement, ...payload } = entry.payload;
      return { ...entry, payload: payload as typeof entry.payload };
    }),
    planStatusWhen: {
      othersAwaitInput: decide(["awaiting_input"]).planStatus,
      othersAllTerminal: decide([]).planStatus,
      otherwise: otherwise.planStatus,
    },
    preconditions: {
      planStatus: "executing",
      stepStatus: "in_progress",
      terminalStepStatuses: TERMINAL_STEP_STATUSES,
    },
  };
}
