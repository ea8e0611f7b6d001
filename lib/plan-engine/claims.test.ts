import { describe, expect, it } from "vitest";
import { firstClaimable, isClaimable } from "./claims";

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
      { stepOrder: 3, status: "pending" as const, leaseExpiresAt: null },
      { stepOrder: 1, status: "in_progress" as const, leaseExpiresAt: later },
      { stepOrder: 2, status: "in_progress" as const, leaseExpiresAt: earlier },
    ];
    expect(firstClaimable(steps, now)?.stepOrder).toBe(2);
    expect(firstClaimable(steps.slice(0, 2), now)?.stepOrder).toBe(3);
    expect(firstClaimable(steps.slice(1, 2), now)).toBeUndefined();
  });
});
