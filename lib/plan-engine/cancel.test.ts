import { describe, expect, it } from "vitest";
import { cancelledPlanMessage, decideCancel } from "./cancel";
import { PLAN_STATUSES, type PlanStatus } from "./states";
import { isTerminalPlanStatus } from "./transitions";

const at = new Date("2026-01-01T00:00:00.000Z");
const plan = (status: PlanStatus) => ({
  id: "p",
  status,
  steps: [
    { id: "s1", status: "completed" as const },
    { id: "s2", status: "in_progress" as const },
    { id: "s3", status: "awaiting_input" as const },
    { id: "s4", status: "pending" as const },
  ],
  pendingReviews: [{ id: "r1", stepId: "s3" }],
});

describe("decideCancel", () => {
  it("cancels every unfinished plan: reviews withdrawn, leases ended, who and why in the trail", () => {
    for (const status of PLAN_STATUSES.filter((s) => !isTerminalPlanStatus(s))) {
      const decided = decideCancel(plan(status), { reason: "No longer needed", by: "Ada", at });
      expect(decided).toMatchObject({
        planStatus: "cancelled",
        cancellation: { by: "Ada", reason: "No longer needed", at: at.toISOString() },
        withdrawnReviewIds: ["r1"],
        releasedStepIds: ["s2"],
      });
      expect(decided.audit.map((entry) => (entry.payload as { action?: string }).action)).toEqual([
        "review_withdrawn",
        "cancelled",
      ]);
    }
  });

  it("refuses an ended plan, pointing a completed one to re-opening", () => {
    for (const status of ["completed", "failed", "cancelled"] as const) {
      expect(() => decideCancel(plan(status), { reason: "r", by: "Ada", at })).toThrow(
        expect.objectContaining({ code: "PLAN_NOT_MODIFIABLE" }),
      );
    }
    expect(() => decideCancel(plan("completed"), { reason: "r", by: "Ada", at })).toThrow(
      /retry_step/,
    );
  });

  it("says who cancelled and why", () => {
    expect(cancelledPlanMessage("p", { by: "Ada", reason: "Done elsewhere", at: "t" })).toBe(
      "Plan p was cancelled by Ada at t: Done elsewhere.",
    );
  });

  it("keeps a reason's own full stop rather than adding a second", () => {
    expect(
      cancelledPlanMessage("p", {
        by: "Ada",
        reason: "Answered by the team's wiki only.",
        at: "t",
      }),
    ).toBe("Plan p was cancelled by Ada at t: Answered by the team's wiki only.");
    expect(cancelledPlanMessage("p", { by: "Ada", reason: "Why go on? ", at: "t" })).toBe(
      "Plan p was cancelled by Ada at t: Why go on?",
    );
  });
});
