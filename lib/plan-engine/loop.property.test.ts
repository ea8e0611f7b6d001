import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ReplayRow, replayAudit } from "@/tests/support/audit-replay";
import { cond, reviewEvent } from "@/tests/support/plan-snapshots";
import { AppError } from "./app-error";
import type { AuditEntry } from "./audit-entries";
import { decideCancel } from "./cancel";
import { decideModify } from "./modify";
import type { AwaitingSteps, LoopCondition, PlanSnapshot } from "./plan-snapshot";
import { TIMEOUT_ACTIONS, type TimeoutAction } from "./review-deadlines";
import { decideReviewDecision } from "./review-decision";
import { decideReviewRequest } from "./review-request";
import type { PlanStatus, ReviewDecision, StepStatus } from "./states";
import { decideSubmit } from "./submit";
import { isTerminalPlanStatus } from "./transitions";

/**
 * A model of the loop that applies the engine's decisions the way the services
 * write them, with the claim rule of get_next_step (the first step nobody
 * holds). Random sequences of events on random plans must never make an
 * invalid transition, lose an audit row or leave a plan that a willing agent
 * and reviewer cannot finish.
 */
type Model = {
  snapshot: PlanSnapshot;
  conditions: Map<string, LoopCondition[]>;
  /** Steps in progress that an agent holds (others are released or expired). */
  held: Set<string>;
  /** What each review's deadline does when it passes (reviews without one are absent). */
  deadlines: Map<string, TimeoutAction>;
  audit: ReplayRow[];
};

function record(model: Model, entries: AuditEntry[]) {
  for (const entry of entries) {
    model.audit.push({
      eventType: entry.eventType,
      stepId: "stepId" in entry ? (entry.stepId ?? null) : null,
      payload: entry.payload as Record<string, unknown>,
    });
  }
}

function setStep(model: Model, id: string, status: StepStatus) {
  model.snapshot = {
    ...model.snapshot,
    steps: model.snapshot.steps.map((s) => (s.id === id ? { ...s, status } : s)),
  };
}

function applyEffects(
  model: Model,
  effects: {
    skippedStepIds: string[];
    planStatus: PlanStatus;
    awaitingSteps: AwaitingSteps | null;
    withdrawnReviewIds: string[];
    audit: AuditEntry[];
  },
) {
  for (const id of effects.skippedStepIds) setStep(model, id, "skipped");
  model.snapshot = {
    ...model.snapshot,
    status: effects.planStatus,
    awaitingSteps: effects.awaitingSteps,
    pendingReviews: model.snapshot.pendingReviews.filter(
      (r) => !effects.withdrawnReviewIds.includes(r.id),
    ),
  };
  record(model, effects.audit);
}

/** get_next_step: the first pending or unheld in-progress step of an active plan. */
function claim(model: Model): string | undefined {
  const { snapshot } = model;
  if (isTerminalPlanStatus(snapshot.status) || snapshot.status === "awaiting_review") return;
  const step = [...snapshot.steps]
    .sort((a, b) => a.stepOrder - b.stepOrder)
    .find((s) => s.status === "pending" || (s.status === "in_progress" && !model.held.has(s.id)));
  if (!step) return;
  const attempt =
    model.audit.filter((r) => r.eventType === "step_started" && r.stepId === step.id).length + 1;
  model.audit.push({
    eventType: "step_started",
    stepId: step.id,
    payload: {
      stepOrder: step.stepOrder,
      attempt,
      ...(step.status === "in_progress" ? { reissued: "lease_expired" } : {}),
    },
  });
  setStep(model, step.id, "in_progress");
  model.held.add(step.id);
  if (snapshot.status !== "executing") model.snapshot = { ...model.snapshot, status: "executing" };
  return step.id;
}

/** The engine's decision, or undefined when it refuses with a CONFLICT (a pause holds): nothing changes. */
function unlessConflict<T>(decide: () => T): T | undefined {
  try {
    return decide();
  } catch (error) {
    if (error instanceof AppError && error.code === "CONFLICT") return undefined;
    throw error;
  }
}

/** False when the engine refused it (a pause holds): nothing changed. */
function submit(model: Model, stepId: string, result: Record<string, unknown>): boolean {
  const decided = unlessConflict(() =>
    decideSubmit(model.snapshot, model.conditions.get(stepId) ?? [], {
      stepId,
      result,
      resultSummary: null,
      confidence: 0.5,
    }),
  );
  if (!decided) return false;
  setStep(model, stepId, "completed");
  model.held.delete(stepId);
  applyEffects(model, decided);
  return true;
}

/**
 * request_user_review through the engine's own check (refused, among others,
 * while the plan is paused), with the deadline action Cairn will take itself.
 */
function requestReview(
  model: Model,
  stepId: string,
  n: number,
  onTimeout: TimeoutAction | null,
): boolean {
  const step = model.snapshot.steps.find((s) => s.id === stepId);
  if (!step) return false;
  const paused = model.snapshot.steps.find((s) => s.id === model.snapshot.pausedOnFailedStepId);
  const allowed = unlessConflict(() => {
    decideReviewRequest(
      {
        ...model.snapshot,
        pause: paused ? { stepOrder: paused.stepOrder, suggestedTool: "modify_plan" } : null,
      },
      step,
    );
    return true;
  });
  if (!allowed) return false;
  const id = `r${n}`;
  setStep(model, stepId, "awaiting_input");
  model.held.delete(stepId);
  model.snapshot = {
    ...model.snapshot,
    status: "awaiting_review",
    pendingReviews: [...model.snapshot.pendingReviews, { id, stepId }],
  };
  if (onTimeout) model.deadlines.set(id, onTimeout);
  model.audit.push({ eventType: "user_reviewed", stepId, payload: { action: "review_requested" } });
  return true;
}

/** False when nothing was decided (no pending review, or the engine refused: a pause holds). */
function decide(model: Model, decision: ReviewDecision): boolean {
  const review = model.snapshot.pendingReviews[0];
  if (!review || model.snapshot.status !== "awaiting_review") return false;
  const step = model.snapshot.steps.find((s) => s.id === review.stepId);
  if (step?.status !== "awaiting_input") return false;
  const decided = unlessConflict(() =>
    decideReviewDecision(
      model.snapshot,
      { ...step, status: "awaiting_input", instructions: "x" },
      model.conditions.get(step.id) ?? [],
      {
        ...reviewEvent(decision, decision === "modify" ? "again" : null, {
          result: { flag: true },
          confidence: null,
        }),
        reviewRequestId: review.id,
      },
    ),
  );
  if (!decided) return false;
  setStep(model, step.id, decided.stepStatus);
  model.snapshot = {
    ...model.snapshot,
    pendingReviews: model.snapshot.pendingReviews.filter((r) => r.id !== review.id),
  };
  applyEffects(model, decided);
  return true;
}

/**
 * The review's deadline passes: Cairn applies its action through the same
 * decision as a person. No review strands its plan: the action is accepted
 * whatever happened since the review was requested.
 */
function deadlinePasses(model: Model) {
  const review = model.snapshot.pendingReviews[0];
  const action = review && model.deadlines.get(review.id);
  if (!action || action === "escalate") return;
  expect(decide(model, action)).toBe(true);
}

/** modify_plan through the engine's own decision, with its operations applied to the model. */
function modify(
  model: Model,
  action: "add_steps" | "decline_add_steps" | "retry_step" | "fail_step",
  n: number,
) {
  const { snapshot } = model;
  const target =
    action === "fail_step"
      ? snapshot.steps.find((s) => s.status === "in_progress" || s.status === "pending")
      : snapshot.steps.find((s) => s.status === "failed");
  const decided = decideModify(
    snapshot,
    snapshot.steps.map((s) => ({
      ...s,
      stepType: "search",
      instructions: "x",
      failureReason: null,
      arguments: null,
      inputs: null,
    })),
    {
      action,
      modificationRationale: "model",
      steps: [{ id: `added${n}`, stepType: "search", instructions: "added" }],
      stepId: target?.id,
      reason: "model",
    },
  );
  if (action === "fail_step" && target) model.held.delete(target.id);
  for (const entry of decided.audit) {
    model.audit.push({
      eventType: entry.eventType,
      stepId: "stepId" in entry ? (entry.stepId ?? null) : null,
      payload: entry.payload as Record<string, unknown>,
    });
  }
  model.snapshot = {
    ...snapshot,
    steps: decided.steps.map(({ id, stepOrder, status, stepType }) => ({
      id,
      stepOrder,
      status,
      stepType,
    })),
    status: decided.planStatus,
    awaitingSteps: decided.awaitingSteps,
    // Any change ends a pause (modify_plan clears the stored reason).
    pausedOnFailedStepId: null,
  };
}

/** cancel_plan: the engine's decision applied; nobody holds a step of a cancelled plan. */
function cancel(model: Model) {
  const decided = decideCancel(model.snapshot, { reason: "model", by: "someone", at: new Date(0) });
  for (const id of decided.releasedStepIds) model.held.delete(id);
  model.snapshot = {
    ...model.snapshot,
    status: decided.planStatus,
    awaitingSteps: null,
    pausedOnFailedStepId: null,
    pendingReviews: model.snapshot.pendingReviews.filter(
      (r) => !decided.withdrawnReviewIds.includes(r.id),
    ),
  };
  record(model, decided.audit);
}

/**
 * get_next_step running a server step whose tool fails: the step fails (with
 * its step_failed row) and the plan pauses on it, as run-server-steps does.
 */
function serverToolFails(model: Model) {
  const { snapshot } = model;
  if (isTerminalPlanStatus(snapshot.status) || snapshot.status === "awaiting_review") return;
  if (snapshot.pausedOnFailedStepId) return;
  const step = snapshot.steps.find((s) => s.status === "pending");
  if (!step) return;
  model.audit.push(
    {
      eventType: "step_started",
      stepId: step.id,
      payload: { stepOrder: step.stepOrder, attempt: 1 },
    },
    { eventType: "step_failed", stepId: step.id, payload: { source: "server_tool" } },
  );
  setStep(model, step.id, "failed");
  model.snapshot = {
    ...model.snapshot,
    status: snapshot.status === "executing" ? snapshot.status : "executing",
    pausedOnFailedStepId: step.id,
  };
}

/** A pause holds: while the paused step is still failed, the plan has not completed around it. */
function pauseHolds(model: Model): boolean {
  const paused = model.snapshot.steps.find((s) => s.id === model.snapshot.pausedOnFailedStepId);
  return paused?.status !== "failed" || model.snapshot.status !== "completed";
}

const EXPRESSIONS = ["result.flag === true", 'status === "completed"', "confidence > 0.9"];
const ACTIONS = ["skip_to", "add_steps", "fail", "continue"];

const planArbitrary = fc.integer({ min: 1, max: 6 }).chain((n) =>
  fc.record({
    n: fc.constant(n),
    conditions: fc.array(
      fc.record({
        after: fc.integer({ min: 1, max: n }),
        expression: fc.constantFrom(...EXPRESSIONS),
        action: fc.constantFrom(...ACTIONS),
        target: fc.integer({ min: 1, max: n }),
      }),
      { maxLength: 4 },
    ),
  }),
);

const eventArbitrary = fc.oneof(
  fc.record({ kind: fc.constant("claim" as const) }),
  fc.record({ kind: fc.constant("submit" as const), flag: fc.boolean() }),
  fc.record({
    kind: fc.constant("review" as const),
    onTimeout: fc.constantFrom<TimeoutAction | null>(null, ...TIMEOUT_ACTIONS),
  }),
  fc.record({ kind: fc.constant("deadline" as const) }),
  fc.record({
    kind: fc.constant("decide" as const),
    decision: fc.constantFrom<ReviewDecision>("approve", "reject", "modify", "skip"),
  }),
  fc.record({ kind: fc.constant("expire" as const) }),
  fc.record({
    kind: fc.constantFrom(
      "add_steps" as const,
      "decline_add_steps" as const,
      "retry_step" as const,
      "fail_step" as const,
    ),
  }),
  fc.record({ kind: fc.constant("cancel" as const) }),
  fc.record({ kind: fc.constant("server_tool_fails" as const) }),
  // get_step_context: the holder renews its lease, so its step stays held.
  fc.record({ kind: fc.constant("renew" as const) }),
);

type PlanSpec = {
  n: number;
  conditions: { after: number; expression: string; action: string; target: number }[];
};

function build(spec: PlanSpec): Model {
  const steps = Array.from({ length: spec.n }, (_, i) => ({
    id: `s${i + 1}`,
    stepOrder: i + 1,
    status: "pending" as StepStatus,
    stepType: "search" as const,
  }));
  const conditions = new Map<string, LoopCondition[]>();
  spec.conditions.forEach((c, i) => {
    const list = conditions.get(`s${c.after}`) ?? [];
    list.push(
      cond(
        `c${i}`,
        c.expression,
        c.action,
        c.action === "skip_to" ? { stepId: `s${c.target}` } : {},
      ),
    );
    conditions.set(`s${c.after}`, list);
  });
  return {
    snapshot: { id: "p", status: "planning", awaitingSteps: null, steps, pendingReviews: [] },
    conditions,
    held: new Set(),
    deadlines: new Map(),
    audit: [],
  };
}

describe("the loop under random events (property)", () => {
  it("never makes an invalid transition or misses an audit row, and always can finish", () => {
    fc.assert(
      fc.property(planArbitrary, fc.array(eventArbitrary, { maxLength: 30 }), (spec, events) => {
        const model = build(spec);
        let n = 0;
        for (const event of events) {
          n += 1;
          const holding = [...model.held];
          try {
            if (event.kind === "claim") claim(model);
            else if (event.kind === "submit" && holding[0])
              submit(model, holding[0], { flag: event.flag });
            else if (event.kind === "review" && holding[0])
              requestReview(model, holding[0], n, event.onTimeout);
            else if (event.kind === "deadline") deadlinePasses(model);
            else if (event.kind === "decide") decide(model, event.decision);
            else if (event.kind === "expire") model.held.clear();
            else if (event.kind === "cancel") cancel(model);
            else if (event.kind === "server_tool_fails") serverToolFails(model);
            else if (event.kind === "renew") {
              // A renewed step is neither handed out again nor released.
              const before = new Set(model.held);
              expect(claim(model)).not.toBe(holding[0] ?? "none");
              for (const id of before) expect(model.held.has(id)).toBe(true);
            } else if (
              event.kind === "add_steps" ||
              event.kind === "decline_add_steps" ||
              event.kind === "retry_step" ||
              event.kind === "fail_step"
            ) {
              modify(model, event.kind, n);
            }
          } catch (error) {
            // Refusals are answers, never internal errors.
            expect(error).toBeInstanceOf(AppError);
            expect((error as AppError).code).not.toBe("INTERNAL_ERROR");
          }
          expect(replayAudit(model.snapshot.steps, model.audit)).toEqual([]);
          if (model.snapshot.status === "completed")
            expect(model.snapshot.awaitingSteps).toBeNull();
          if (isTerminalPlanStatus(model.snapshot.status))
            expect(model.snapshot.pendingReviews).toEqual([]);
          expect(pauseHolds(model)).toBe(true);
          if (model.snapshot.status === "cancelled") expect(model.held.size).toBe(0);
        }
        // A willing agent and reviewer finish whatever the events left.
        model.held.clear();
        for (
          let round = 0;
          round < 100 && !isTerminalPlanStatus(model.snapshot.status);
          round += 1
        ) {
          n += 1;
          // An approve refused by a pause: the reviewer sends the step back instead.
          if (model.snapshot.status === "awaiting_review") {
            if (!decide(model, "approve")) decide(model, "modify");
          } else if (model.snapshot.awaitingSteps && !claim(model))
            modify(model, "decline_add_steps", n);
          else {
            const stepId = [...model.held][0] ?? claim(model);
            // A submit refused by a pause: the willing agent answers the pause first.
            if (stepId) {
              if (!submit(model, stepId, { flag: false })) modify(model, "retry_step", n);
            } else if (model.snapshot.steps.some((s) => s.status === "failed"))
              modify(model, "retry_step", n);
            else throw new Error(`stuck: ${JSON.stringify(model.snapshot)}`);
          }
        }
        expect(isTerminalPlanStatus(model.snapshot.status)).toBe(true);
        expect(replayAudit(model.snapshot.steps, model.audit)).toEqual([]);
        // A plan that completed with a failed step can be re-opened and finished again.
        if (
          model.snapshot.status === "completed" &&
          model.snapshot.steps.some((s) => s.status === "failed")
        ) {
          modify(model, "retry_step", n + 1);
          expect(model.snapshot.status).toBe("executing");
          const again = claim(model);
          if (again) submit(model, again, { flag: false });
          expect(replayAudit(model.snapshot.steps, model.audit)).toEqual([]);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
