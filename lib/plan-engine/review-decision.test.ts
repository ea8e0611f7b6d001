import { describe, expect, it } from "vitest";
import { cond, plan, reviewEvent, reviewed } from "@/tests/support/plan-snapshots";
import type { PlanSnapshot } from "./plan-snapshot";
import { decideReviewDecision } from "./review-decision";
import type { StepStatus } from "./states";

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

  it("neither approves nor hands back a step behind a checkpoint nobody has decided; skip and reject still go", () => {
    // A checkpoint added before the reviewed step after its review was asked.
    const base = waiting(["pending", "awaiting_input", "pending"]);
    const held: PlanSnapshot = {
      ...base,
      pendingReviews: [{ id: "r1", stepId: "s2" }],
      steps: base.steps.map((s) => (s.id === "s1" ? { ...s, stepType: "checkpoint" } : s)),
    };
    for (const decision of ["approve", "modify"] as const) {
      expect(() =>
        decideReviewDecision(held, reviewed("s2", 2), [], event(decision, "Go.")),
      ).toThrow(
        expect.objectContaining({
          code: "CONFLICT",
          message: expect.stringMatching(
            /Step 1 of plan .* is a checkpoint nobody has decided yet, and the steps after it take no approval and no feedback/,
          ),
        }),
      );
    }
    expect(decideReviewDecision(held, reviewed("s2", 2), [], event("skip")).stepStatus).toBe(
      "skipped",
    );
    expect(
      decideReviewDecision(held, reviewed("s2", 2), [], event("reject", "No.")).stepStatus,
    ).toBe("failed");
    // The same plan with the checkpoint decided: approve goes.
    const decided: PlanSnapshot = {
      ...held,
      steps: held.steps.map((s) => (s.id === "s1" ? { ...s, status: "completed" } : s)),
    };
    expect(decideReviewDecision(decided, reviewed("s2", 2), [], event("approve")).stepStatus).toBe(
      "completed",
    );
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
