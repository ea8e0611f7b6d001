/**
 * submit_step_result decided in the engine, in the style of a state machine's
 * `transition(state, event) -> [next, effects]`: the snapshot and the result
 * in, every write and audit entry out, or the AppError the caller should see
 * (docs/protocol.md, "The loop"). Also the common submit decided before its
 * read, for the one guarded statement that writes it.
 */
import { AppError } from "./app-error";
import { type AuditEntry, retryStepEntry } from "./audit-entries";
import { checkNotHeldByCheckpoint } from "./checkpoint-guard";
import { type CompletionEffects, completionEffects } from "./completion";
import type { LoopCondition, LoopStep, PlanSnapshot } from "./plan-snapshot";
import { checkNotHeldByReview } from "./review-request";
import type { PlanStatus, StepStatus } from "./states";
import { isTerminalPlanStatus, transitionStep } from "./transitions";

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
    audit.push(
      retryStepEntry(plan.id, step.id, {
        modificationRationale:
          "The agent submitted the result of a server-run step whose tool failed.",
      }),
    );
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
 * The loop's common submit decided before its read, so that one guarded
 * statement can write it: an in-progress step of an `executing` plan that
 * waits on no add_steps, whose branching conditions (`conditions`, as the
 * statement must find them stored; none on a first try) fire no action that
 * changes the plan: only `continue`, or none. Then the outcome depends on the
 * other steps only through `derivePlanStatus`, so the plan's next status is
 * decided here for each of its three cases (another step awaits input; else
 * no other step is open, `OPEN_STEP_STATUSES`; else), by `decideSubmit` itself on a
 * representative snapshot; the statement picks the case from the stored steps
 * and writes nothing when a precondition fails (the caller then decides on a
 * full snapshot). The audit rows' `stepOrder` is read by the statement. Null
 * when a condition fires skip_to, fail or add_steps: those are decided on the
 * plan's full snapshot.
 */
export function decideCommonSubmit(
  planId: string,
  event: SubmitEvent,
  conditions: readonly LoopCondition[] = [],
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
    conditions: readonly LoopCondition[];
  };
  verdicts: SubmitDecision["verdicts"];
  fired: SubmitDecision["fired"];
} | null {
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
      conditions,
      event,
    );
  const otherwise = decide(["pending"]);
  if (otherwise.fired.some((fired) => fired.action !== "continue")) return null;
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
      conditions,
    },
    verdicts: otherwise.verdicts,
    fired: otherwise.fired,
  };
}
