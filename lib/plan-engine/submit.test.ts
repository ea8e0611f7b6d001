import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cond, plan, submitOf } from "@/tests/support/plan-snapshots";
import { OPEN_STEP_STATUSES, type PlanStatus, STEP_STATUSES, type StepStatus } from "./states";
import { decideCommonSubmit, decideSubmit } from "./submit";

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

/** A branching condition on `result.n` or the confidence, with any action but a skip's target. */
const anyCondition = fc.record({
  expression: fc.constantFrom(
    "result.n >= 5",
    "result.n < 5",
    "confidence > 0.5",
    'status === "completed"',
  ),
  action: fc.constantFrom("continue", "fail", "add_steps"),
});

describe("decideCommonSubmit", () => {
  it("decides, for every state of the other steps and any conditions, what decideSubmit decides, or nothing", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...STEP_STATUSES), { maxLength: 8 }),
        fc.array(anyCondition, { maxLength: 4 }),
        fc.integer({ min: 0, max: 9 }),
        (others, drawn, n) => {
          const conditions = drawn.map((c, i) => cond(`c${i}`, c.expression, c.action));
          const event = submitOf("s0", { n });
          const common = decideCommonSubmit("p", event, conditions);
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
            conditions,
            event,
          );
          // Nothing decided ahead exactly when a condition fires an action
          // that changes the plan: the full snapshot decides those.
          if (!common) {
            expect(full.fired.some((f) => f.action !== "continue")).toBe(true);
            return;
          }
          expect(full.fired.every((f) => f.action === "continue")).toBe(true);
          const open: readonly StepStatus[] = OPEN_STEP_STATUSES;
          const terminal = !others.some((s) => open.includes(s));
          const picked = others.includes("awaiting_input")
            ? common.planStatusWhen.othersAwaitInput
            : terminal
              ? common.planStatusWhen.othersAllTerminal
              : common.planStatusWhen.otherwise;
          expect(picked).toBe(full.planStatus);
          expect(common.preconditions.conditions).toEqual(conditions);
          expect(common.verdicts).toEqual(full.verdicts);
          expect(common.fired).toEqual(full.fired);
          expect(common.audit.map((a) => a.eventType)).toEqual(full.audit.map((a) => a.eventType));
        },
      ),
      { numRuns: 500 },
    );
  });
});
