import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ReplayRow, replayAudit } from "@/tests/support/audit-replay";
import { AppError } from "./app-error";
import type { AuditEntry } from "./audit-entries";
import { decideCancel } from "./cancel";
import {
  type AwaitingSteps,
  decideCommonSubmit,
  decidePlanStatusAfterModify,
  decideReviewDecision,
  decideReviewRequest,
  decideSubmit,
  isLastOpenStep,
  type LoopCondition,
  type PlanSnapshot,
} from "./loop";
import { decideModify } from "./modify";
import { TIMEOUT_ACTIONS, type TimeoutAction } from "./review-deadlines";
import type { PlanStatus, ReviewDecision, StepStatus } from "./states";
import { isTerminalPlanStatus } from "./transitions";

const plan = (statuses: StepStatus[], over: Partial<PlanSnapshot> = {}): PlanSnapshot => ({
  id: "p",
  status: "executing",
  awaitingSteps: null,
  steps: statuses.map((status, i) => ({
    id: `s${i + 1}`,
    stepOrder: i + 1,
    status,
    stepType: "search" as const,
  })),
  pendingReviews: [],
  ...over,
});

const cond = (
  id: string,
  conditionExpression: string,
  ifTrueAction: string,
  actionParams: Record<string, unknown> = {},
): LoopCondition => ({ id, conditionExpression, ifTrueAction, actionParams });

const submitOf = (stepId: string, result: Record<string, unknown> = {}) => ({
  stepId,
  result,
  resultSummary: null,
  confidence: 0.9,
});

const reviewed = (id: string, order: number) => ({
  id,
  stepOrder: order,
  status: "awaiting_input" as const,
  instructions: "Do it.",
});

/** A person's decision through the web UI on review r1, with the agent's proposal if any. */
const reviewEvent = (
  decision: ReviewDecision,
  feedback: string | null = null,
  proposal: { result: Record<string, unknown> | null; confidence: number | null } = {
    result: null,
    confidence: null,
  },
) => ({
  reviewRequestId: "r1",
  decision,
  feedback,
  proposal,
  enteredResult: null as Record<string, unknown> | null,
  channel: "web" as const,
  reviewDigest: "d".repeat(64),
  decisionPolicy: "people_only" as const,
});

describe("decideSubmit", () => {
  it("completes an in-progress step and follows the steps for the plan's status", () => {
    const last = decideSubmit(plan(["completed", "in_progress"]), [], submitOf("s2"));
    expect(last.planStatus).toBe("completed");
    expect(last.audit.map((a) => a.eventType)).toEqual(["step_completed"]);
    const middle = decideSubmit(plan(["in_progress", "pending"]), [], submitOf("s1"));
    expect(middle.planStatus).toBe("executing");
  });

  it("starts a still-pending step with its own step_started row", () => {
    const decided = decideSubmit(plan(["pending"], { status: "planning" }), [], submitOf("s1"));
    expect(decided.autoStarted).toBe(true);
    expect(decided.audit.map((a) => a.eventType)).toEqual(["step_started", "step_completed"]);
    expect(decided.planStatus).toBe("completed");
  });

  it("answers CONFLICT for a step already completed, even on a finished plan", () => {
    for (const status of ["executing", "completed"] as PlanStatus[]) {
      expect(() =>
        decideSubmit(plan(["completed", "in_progress"], { status }), [], submitOf("s1")),
      ).toThrow(expect.objectContaining({ code: "CONFLICT" }));
    }
  });

  it("refuses a step awaiting review and a failed plan", () => {
    expect(() => decideSubmit(plan(["awaiting_input"]), [], submitOf("s1"))).toThrow(
      /waiting for a person/,
    );
    expect(() =>
      decideSubmit(plan(["in_progress"], { status: "failed" }), [], submitOf("s1")),
    ).toThrow(expect.objectContaining({ code: "INVALID_TRANSITION" }));
  });

  it("skips to the target, records the verdicts and the skip", () => {
    const decided = decideSubmit(
      plan(["in_progress", "pending", "pending", "pending"]),
      [cond("c1", "result.n > 1", "skip_to", { stepId: "s4" }), cond("c2", "result.n > 5", "fail")],
      submitOf("s1", { n: 2 }),
    );
    expect(decided.skippedStepIds).toEqual(["s2", "s3"]);
    expect(decided.verdicts).toEqual([
      { id: "c1", fired: true },
      { id: "c2", fired: false },
    ]);
    expect(decided.audit.map((a) => a.payload)).toContainEqual(
      expect.objectContaining({ action: "branch_skipped_steps", skippedStepIds: ["s2", "s3"] }),
    );
  });

  it("fails the plan on a fired fail, leaves later conditions unevaluated, withdraws reviews", () => {
    // Step 1 was handed out before step 2 went up for review: a step before
    // the review still takes its result.
    const decided = decideSubmit(
      plan(["in_progress", "awaiting_input"], {
        status: "awaiting_review",
        pendingReviews: [{ id: "r1", stepId: "s2" }],
      }),
      [
        cond("c1", "result.dead === true", "fail", { reason: "Dead end" }),
        cond("c2", "true === true", "continue"),
      ],
      submitOf("s1", { dead: true }),
    );
    expect(decided.planStatus).toBe("failed");
    expect(decided.verdicts).toEqual([{ id: "c1", fired: true }]);
    expect(decided.withdrawnReviewIds).toEqual(["r1"]);
    expect(
      decided.audit.map((a) => ("action" in a.payload ? a.payload.action : a.eventType)),
    ).toEqual(["step_completed", "branch_failed_plan", "review_withdrawn"]);
  });

  it("refuses a result for any step after a waiting review, pending or handed out before it", () => {
    for (const later of ["pending", "in_progress"] as const) {
      const waiting = plan(["completed", "awaiting_input", later], {
        status: "awaiting_review",
        pendingReviews: [{ id: "r1", stepId: "s2" }],
      });
      expect(() => decideSubmit(waiting, [], submitOf("s3"))).toThrow(
        /waits for a person's decision on review r1 of step 2/,
      );
    }
  });

  it("keeps a plan whose last open step fired add_steps waiting, not completed", () => {
    const addSteps = [cond("c1", "result.gaps === true", "add_steps", { hint: "more" })];
    const last = decideSubmit(
      plan(["completed", "in_progress"]),
      addSteps,
      submitOf("s2", { gaps: true }),
    );
    expect(last.planStatus).toBe("executing");
    expect(last.awaitingSteps).toMatchObject({
      conditionId: "c1",
      stepId: "s2",
      params: { hint: "more" },
    });
  });

  it("holds a plan whose earlier step fired add_steps too, so the added steps come before the next one", () => {
    const addSteps = [cond("c1", "result.gaps === true", "add_steps", { hint: "more" })];
    const early = decideSubmit(
      plan(["in_progress", "pending"]),
      addSteps,
      submitOf("s1", { gaps: true }),
    );
    expect(early.planStatus).toBe("executing");
    expect(early.awaitingSteps).toMatchObject({ conditionId: "c1", stepId: "s1", stepOrder: 1 });
    expect(early.fired.map((f) => f.action)).toEqual(["add_steps"]);
    // A later submit of another step keeps the wait; only modify_plan answers it.
    const held = decideSubmit(
      { ...plan(["completed", "in_progress", "pending"]), awaitingSteps: early.awaitingSteps },
      [],
      submitOf("s2"),
    );
    expect(held.awaitingSteps).toEqual(early.awaitingSteps);
  });
});

describe("a pause holds", () => {
  it("does not complete a plan paused on a failed server step when another step is submitted", () => {
    const paused = plan(["in_progress", "failed"], { pausedOnFailedStepId: "s2" });
    expect(decideSubmit(paused, [], submitOf("s1")).planStatus).toBe("executing");
    // The paused step's own result (the pause's documented way on) completes it, and the plan.
    const after = plan(["completed", "failed"], { pausedOnFailedStepId: "s2" });
    expect(decideSubmit(after, [], submitOf("s2")).planStatus).toBe("completed");
  });

  it("does not fail a paused plan around its pause either: the submit is a CONFLICT that changes nothing", () => {
    const paused = plan(["in_progress", "failed", "pending"], { pausedOnFailedStepId: "s2" });
    const gate = [cond("c1", 'status === "completed"', "fail")];
    expect(() => decideSubmit(paused, gate, submitOf("s1"))).toThrow(
      /is paused on step 2, whose tool failed.*Nothing was changed/,
    );
    // Without the pause the same condition fails the plan.
    const running = plan(["in_progress", "completed", "pending"]);
    expect(decideSubmit(running, gate, submitOf("s1")).planStatus).toBe("failed");
  });
});

describe("decideCommonSubmit", () => {
  it("decides, for every state of the other steps, what decideSubmit decides", () => {
    const statuses: StepStatus[] = [
      "pending",
      "in_progress",
      "awaiting_input",
      "completed",
      "skipped",
      "failed",
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...statuses), { maxLength: 8 }), (others) => {
        const common = decideCommonSubmit("p", submitOf("s0"));
        const snapshot = plan([]);
        const full = decideSubmit(
          {
            ...snapshot,
            steps: [
              { id: "s0", stepOrder: 1, status: "in_progress", stepType: "search" },
              ...others.map((status, i) => ({
                id: `o${i}`,
                stepOrder: i + 2,
                status,
                stepType: "search" as const,
              })),
            ],
          },
          [],
          submitOf("s0"),
        );
        const terminal = others.every((s) => common.preconditions.terminalStepStatuses.includes(s));
        const picked = others.includes("awaiting_input")
          ? common.planStatusWhen.othersAwaitInput
          : terminal
            ? common.planStatusWhen.othersAllTerminal
            : common.planStatusWhen.otherwise;
        expect(picked).toBe(full.planStatus);
        expect(common.audit.map((a) => a.eventType)).toEqual(full.audit.map((a) => a.eventType));
      }),
      { numRuns: 500 },
    );
  });
});

describe("decideReviewDecision", () => {
  const waiting = (statuses: StepStatus[]) =>
    plan(statuses, { status: "awaiting_review", pendingReviews: [{ id: "r1", stepId: "s1" }] });
  const event = reviewEvent;

  it("approve evaluates the step's conditions like a submit", () => {
    const decided = decideReviewDecision(
      waiting(["awaiting_input", "pending", "pending"]),
      reviewed("s1", 1),
      [cond("c1", 'status === "completed"', "skip_to", { stepId: "s3" })],
      event("approve"),
    );
    expect(decided.stepStatus).toBe("completed");
    expect(decided.skippedStepIds).toEqual(["s2"]);
    expect(decided.planStatus).toBe("executing");
    expect(decided.withdrawnReviewIds).toEqual([]);
  });

  it("approve without a proposal fires no condition on a confidence nobody reported", () => {
    const decided = decideReviewDecision(
      waiting(["awaiting_input", "pending"]),
      reviewed("s1", 1),
      [cond("c1", "confidence < 0.5", "fail")],
      event("approve", "Fine by me."),
    );
    expect(decided.fired).toEqual([]);
    expect(decided.planStatus).toBe("executing");
    // The step's result records the decision and the person's words.
    expect(decided.result).toEqual({ approvedByReview: "r1", feedback: "Fine by me." });
    expect(decided.confidence).toBeNull();
  });

  it("approve completes the step with the proposal and fires the gates it satisfies", () => {
    const proposal = { result: { score: 95 }, confidence: 0.9 };
    const decided = decideReviewDecision(
      waiting(["awaiting_input", "pending", "pending"]),
      reviewed("s1", 1),
      [
        cond("c1", "confidence < 0.5", "fail"),
        cond("c2", "confidence > 0.85", "skip_to", { stepId: "s3" }),
      ],
      event("approve", null, proposal),
    );
    expect(decided.fired.map((f) => f.conditionId)).toEqual(["c2"]);
    expect(decided.skippedStepIds).toEqual(["s2"]);
    expect(decided).toMatchObject({ result: { score: 95 }, confidence: 0.9 });
    const low = decideReviewDecision(
      waiting(["awaiting_input", "pending"]),
      reviewed("s1", 1),
      [cond("c1", "confidence < 0.5", "fail")],
      event("approve", null, { result: { score: 10 }, confidence: 0.3 }),
    );
    expect(low.planStatus).toBe("failed");
  });

  it("records how the decision came and the digest of what was shown", () => {
    const decided = decideReviewDecision(
      waiting(["awaiting_input", "pending"]),
      reviewed("s1", 1),
      [],
      { ...event("skip"), channel: "relayed" },
    );
    expect(decided.audit[0]?.payload).toMatchObject({
      action: "decision",
      channel: "relayed",
      reviewDigest: "d".repeat(64),
    });
  });

  it("modify hands the step back with the feedback appended", () => {
    const decided = decideReviewDecision(
      waiting(["awaiting_input", "pending"]),
      reviewed("s1", 1),
      [],
      event("modify", "Narrower."),
    );
    expect(decided.stepStatus).toBe("in_progress");
    expect(decided.instructions).toContain("User feedback: Narrower.");
    expect(decided.planStatus).toBe("executing");
  });

  it("reject fails the step and the plan with a step_failed row", () => {
    const decided = decideReviewDecision(
      waiting(["awaiting_input", "completed"]),
      reviewed("s1", 1),
      [],
      event("reject", "Wrong."),
    );
    expect(decided).toMatchObject({ stepStatus: "failed", planStatus: "failed" });
    expect(decided.failureReason).toBe("Rejected by reviewer: Wrong.");
    expect(decided.audit.map((a) => a.eventType)).toEqual(["user_reviewed", "step_failed"]);
  });

  it("skip of the last open step completes the plan", () => {
    const decided = decideReviewDecision(
      waiting(["awaiting_input", "completed"]),
      reviewed("s1", 1),
      [],
      event("skip"),
    );
    expect(decided).toMatchObject({ stepStatus: "skipped", planStatus: "completed" });
  });
});

describe("decidePlanStatusAfterModify", () => {
  it("refuses to leave a plan without steps, with a reason", () => {
    expect(() => decidePlanStatusAfterModify(plan([]), "remove_step", [])).toThrow(
      /keeps at least one/,
    );
  });

  it("keeps a planning plan planning until a step starts", () => {
    expect(
      decidePlanStatusAfterModify(plan([], { status: "planning" }), "add_steps", ["pending"]),
    ).toEqual({ planStatus: "planning", awaitingSteps: null });
  });

  it("ends the wait on add_steps when steps are added or declined", () => {
    const awaiting: AwaitingSteps = {
      conditionId: "c",
      conditionExpression: "x",
      stepId: "s1",
      stepOrder: 1,
      params: {},
    };
    const waiting = plan([], { awaitingSteps: awaiting });
    expect(
      decidePlanStatusAfterModify(waiting, "decline_add_steps", ["completed"]).planStatus,
    ).toBe("completed");
    expect(decidePlanStatusAfterModify(waiting, "add_steps", ["completed", "pending"])).toEqual({
      planStatus: "executing",
      awaitingSteps: null,
    });
    expect(decidePlanStatusAfterModify(waiting, "reorder_steps", ["completed"])).toEqual({
      planStatus: "executing",
      awaitingSteps: awaiting,
    });
  });
});

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

describe("isLastOpenStep", () => {
  it("is true only when every other step has ended", () => {
    const steps = [
      { id: "a", status: "completed" as const },
      { id: "b", status: "awaiting_input" as const },
      { id: "c", status: "skipped" as const },
    ];
    expect(isLastOpenStep(steps, "b")).toBe(true);
    expect(isLastOpenStep([...steps, { id: "d", status: "pending" as const }], "b")).toBe(false);
  });
});

describe("decideReviewDecision with a result the person entered", () => {
  const waiting = plan(["awaiting_input", "pending"], {
    status: "awaiting_review",
    pendingReviews: [{ id: "r1", stepId: "s1" }],
  });

  it("completes a step reviewed without a proposal with the entered result, kept on the trail", () => {
    const entered = { verdict: "holds", sources: 3 };
    const decided = decideReviewDecision(waiting, reviewed("s1", 1), [], {
      ...reviewEvent("approve"),
      enteredResult: entered,
    });
    expect(decided.result).toEqual(entered);
    expect(decided.confidence).toBeNull();
    expect(decided.audit[0]?.payload).toMatchObject({ action: "decision", enteredResult: entered });
  });

  it("refuses an entered result beside a proposal, or with any decision but approve", () => {
    const entered = { verdict: "mine" };
    expect(() =>
      decideReviewDecision(waiting, reviewed("s1", 1), [], {
        ...reviewEvent("approve", null, { result: { verdict: "agent" }, confidence: 0.9 }),
        enteredResult: entered,
      }),
    ).toThrow(/^result: this review carries the agent's proposed result/);
    expect(() =>
      decideReviewDecision(waiting, reviewed("s1", 1), [], {
        ...reviewEvent("skip"),
        enteredResult: entered,
      }),
    ).toThrow(/^result: a result goes only with approve, not skip/);
  });
});
