import { describe, expect, it } from "vitest";
import { appendUserFeedback, applyReviewDecision, splitUserFeedback } from "./decisions";
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

describe("splitUserFeedback", () => {
  it("gives back the original instructions and each feedback in order", () => {
    const twice = appendUserFeedback(appendUserFeedback("Do X.", "first"), "second");
    expect(splitUserFeedback(twice)).toEqual({ original: "Do X.", feedback: ["first", "second"] });
  });

  it("reads instructions without feedback as the original alone", () => {
    expect(splitUserFeedback("Do X.")).toEqual({ original: "Do X.", feedback: [] });
  });
});
