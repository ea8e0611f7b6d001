import { describe, expect, it } from "vitest";
import { appendUserFeedback, applyReviewDecision, planStatusAfterDecision } from "./decisions";
import { REVIEW_DECISIONS } from "./states";
import { canTransitionPlan, canTransitionStep } from "./transitions";

describe("applyReviewDecision", () => {
  it.each([
    ["approve", "completed", "executing"],
    ["reject", "failed", "failed"],
    ["modify", "in_progress", "executing"],
    ["skip", "skipped", "executing"],
  ] as const)("%s -> step %s, plan %s", (decision, stepStatus, planStatus) => {
    expect(applyReviewDecision(decision)).toEqual({ stepStatus, planStatus });
  });

  it("only ever proposes moves the state machines allow", () => {
    for (const decision of REVIEW_DECISIONS) {
      const { stepStatus, planStatus } = applyReviewDecision(decision);
      expect(canTransitionStep("awaiting_input", stepStatus)).toBe(true);
      expect(canTransitionPlan("awaiting_review", planStatus)).toBe(true);
    }
  });
});

describe("planStatusAfterDecision", () => {
  it("fails the plan on reject, even when every step is then terminal", () => {
    expect(planStatusAfterDecision("reject", ["completed", "failed"])).toBe("failed");
  });

  it("completes the plan when approve or skip closed the last open step", () => {
    expect(planStatusAfterDecision("approve", ["completed", "completed"])).toBe("completed");
    expect(planStatusAfterDecision("skip", ["completed", "skipped"])).toBe("completed");
  });

  it("keeps executing while steps remain", () => {
    expect(planStatusAfterDecision("approve", ["completed", "pending"])).toBe("executing");
    expect(planStatusAfterDecision("skip", ["skipped", "pending"])).toBe("executing");
    expect(planStatusAfterDecision("modify", ["in_progress", "pending"])).toBe("executing");
  });

  it("stays in review if another step still awaits input", () => {
    expect(planStatusAfterDecision("approve", ["completed", "awaiting_input"])).toBe(
      "awaiting_review",
    );
  });
});

describe("appendUserFeedback", () => {
  it("appends the feedback after a horizontal rule and a User feedback: prefix", () => {
    expect(appendUserFeedback("Search for X.", "Also cover Y.")).toBe(
      "Search for X.\n\n---\n\nUser feedback: Also cover Y.",
    );
  });

  it("stacks repeated feedback in order", () => {
    const once = appendUserFeedback("Do X.", "first");
    expect(appendUserFeedback(once, "second")).toBe(
      "Do X.\n\n---\n\nUser feedback: first\n\n---\n\nUser feedback: second",
    );
  });
});
