import { describe, expect, it } from "vitest";
import { decideReviewRequest } from "./review-request";

const plan = (
  steps: {
    stepOrder: number;
    stepType: "checkpoint" | "analyze";
    status: "pending" | "in_progress" | "completed";
  }[],
) => ({
  id: "p1",
  status: "executing" as const,
  pause: null,
  steps,
});

describe("decideReviewRequest", () => {
  it("puts no step up for review behind a checkpoint nobody has decided, one added after its hand-out", () => {
    const held = plan([
      { stepOrder: 1, stepType: "checkpoint", status: "pending" },
      { stepOrder: 2, stepType: "analyze", status: "in_progress" },
    ]);
    expect(() => decideReviewRequest(held, { stepOrder: 2, status: "in_progress" })).toThrow(
      expect.objectContaining({
        code: "CONFLICT",
        message: expect.stringMatching(
          /Step 1 of plan p1 is a checkpoint nobody has decided yet, and the steps after it cannot be put up for review/,
        ),
      }),
    );
  });

  it("puts up the step in progress when the checkpoints before it are decided, or it is the checkpoint", () => {
    const decided = plan([
      { stepOrder: 1, stepType: "checkpoint", status: "completed" },
      { stepOrder: 2, stepType: "analyze", status: "in_progress" },
    ]);
    expect(() =>
      decideReviewRequest(decided, { stepOrder: 2, status: "in_progress" }),
    ).not.toThrow();
    const itself = plan([
      { stepOrder: 1, stepType: "analyze", status: "completed" },
      { stepOrder: 2, stepType: "checkpoint", status: "in_progress" },
    ]);
    expect(() =>
      decideReviewRequest(itself, { stepOrder: 2, status: "in_progress" }),
    ).not.toThrow();
  });
});
