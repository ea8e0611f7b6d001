import { describe, expect, it } from "vitest";
import { holdsStepsAfter } from "./checkpoint-guard";
import { firstClaimable, isClaimable } from "./claims";
import { STEP_STATUSES } from "./states";

const now = new Date("2026-11-25T12:00:00.000Z");
const later = new Date(now.getTime() + 60_000);
const earlier = new Date(now.getTime() - 60_000);

describe("the claim rule", () => {
  it("frees a pending step, and a handed-out one whose lease ran out or was released", () => {
    expect(isClaimable({ status: "pending", leaseExpiresAt: null }, now)).toBe(true);
    expect(isClaimable({ status: "in_progress", leaseExpiresAt: null }, now)).toBe(true);
    expect(isClaimable({ status: "in_progress", leaseExpiresAt: earlier }, now)).toBe(true);
    expect(isClaimable({ status: "in_progress", leaseExpiresAt: now }, now)).toBe(true);
    expect(isClaimable({ status: "in_progress", leaseExpiresAt: later }, now)).toBe(false);
    for (const status of ["awaiting_input", "completed", "skipped", "failed"] as const) {
      expect(isClaimable({ status, leaseExpiresAt: null }, now)).toBe(false);
    }
  });

  it("hands out the first free step in step order, whatever order the list is in", () => {
    const steps = [
      {
        stepOrder: 3,
        stepType: "search" as const,
        status: "pending" as const,
        leaseExpiresAt: null,
      },
      {
        stepOrder: 1,
        stepType: "search" as const,
        status: "in_progress" as const,
        leaseExpiresAt: later,
      },
      {
        stepOrder: 2,
        stepType: "search" as const,
        status: "in_progress" as const,
        leaseExpiresAt: earlier,
      },
    ];
    expect(firstClaimable(steps, now)?.stepOrder).toBe(2);
    expect(firstClaimable(steps.slice(0, 2), now)?.stepOrder).toBe(3);
    expect(firstClaimable(steps.slice(1, 2), now)).toBeUndefined();
  });

  it("hands out nothing after a checkpoint nobody has decided, until it is decided", () => {
    const plan = (checkpoint: (typeof STEP_STATUSES)[number], leaseExpiresAt: Date | null) => [
      {
        stepOrder: 1,
        stepType: "search" as const,
        status: "completed" as const,
        leaseExpiresAt: null,
      },
      { stepOrder: 2, stepType: "checkpoint" as const, status: checkpoint, leaseExpiresAt },
      {
        stepOrder: 3,
        stepType: "search" as const,
        status: "pending" as const,
        leaseExpiresAt: null,
      },
    ];
    // Free, it is handed out itself; held by an agent or under review, it holds step 3.
    expect(firstClaimable(plan("pending", null), now)?.stepOrder).toBe(2);
    expect(firstClaimable(plan("in_progress", earlier), now)?.stepOrder).toBe(2);
    expect(firstClaimable(plan("in_progress", later), now)).toBeUndefined();
    expect(firstClaimable(plan("awaiting_input", null), now)).toBeUndefined();
    // Decided (or ended with the plan), it holds nothing.
    for (const status of ["completed", "skipped", "failed"] as const) {
      expect(firstClaimable(plan(status, null), now)?.stepOrder).toBe(3);
    }
  });

  it("holds the steps after it only for a checkpoint not yet decided", () => {
    for (const status of STEP_STATUSES) {
      expect(holdsStepsAfter({ stepType: "checkpoint", status })).toBe(
        ["pending", "in_progress", "awaiting_input"].includes(status),
      );
      expect(holdsStepsAfter({ stepType: "analyze", status })).toBe(false);
    }
  });
});
