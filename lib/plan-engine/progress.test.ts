import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { computeProgress, isStepStalled, type StallCandidate, stallWarnings } from "./progress";
import type { StepStatus } from "./states";

describe("computeProgress", () => {
  it("is zero for a plan without steps", () => {
    expect(computeProgress([])).toEqual({
      percent: 0,
      total: 0,
      pending: 0,
      inProgress: 0,
      awaitingInput: 0,
      completed: 0,
      skipped: 0,
      failed: 0,
    });
  });

  it("counts every status and treats completed, skipped and failed as done", () => {
    expect(
      computeProgress([
        "completed",
        "skipped",
        "failed",
        "pending",
        "in_progress",
        "awaiting_input",
        "completed",
        "pending",
      ]),
    ).toEqual({
      percent: 50,
      total: 8,
      pending: 2,
      inProgress: 1,
      awaitingInput: 1,
      completed: 2,
      skipped: 1,
      failed: 1,
    });
  });

  it.each<[StepStatus[], number]>([
    [["pending"], 0],
    [["completed"], 100],
    [["failed", "skipped"], 100],
    [["completed", "pending", "pending"], 33],
    [["completed", "completed", "pending"], 67],
    [["completed", "in_progress"], 50],
    [["in_progress", "awaiting_input"], 0],
  ])("%j -> %i%%", (statuses, percent) => {
    expect(computeProgress(statuses).percent).toBe(percent);
  });

  it("reads 100 only when every step is terminal and 0 only when none is", () => {
    const almost: StepStatus[] = [...Array<StepStatus>(199).fill("completed"), "pending"];
    expect(computeProgress(almost).percent).toBe(99);
    const barely: StepStatus[] = ["completed", ...Array<StepStatus>(250).fill("pending")];
    expect(computeProgress(barely).percent).toBe(1);
  });

  it("is always an integer", () => {
    for (let total = 1; total <= 30; total += 1) {
      for (let done = 0; done <= total; done += 1) {
        const statuses: StepStatus[] = [
          ...Array<StepStatus>(done).fill("completed"),
          ...Array<StepStatus>(total - done).fill("pending"),
        ];
        expect(Number.isInteger(computeProgress(statuses).percent)).toBe(true);
      }
    }
  });
});

describe("isStepStalled", () => {
  const now = new Date("2025-01-01T12:00:00.000Z");
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  const clock = { thresholdSeconds: 600, leaseSeconds: 600 };
  /** A step in progress, started long ago, whose lease was last renewed `renewed` seconds ago. */
  const renewedAgo = (renewed: number, leaseSeconds = clock.leaseSeconds) => ({
    status: "in_progress" as const,
    startedAt: ago(100_000),
    leaseExpiresAt: ago(renewed - leaseSeconds),
    updatedAt: ago(100_000),
  });

  it("follows the lease, not the start: a renewed step is never stalled however old", () => {
    expect(isStepStalled(renewedAgo(10), now, clock)).toBe(false);
    expect(isStepStalled(renewedAgo(599), now, clock)).toBe(false);
  });

  it("is stalled once the lease ran out", () => {
    expect(isStepStalled(renewedAgo(600), now, clock)).toBe(true);
    // A lease shorter than the threshold that ran out: its holder stopped renewing.
    expect(isStepStalled(renewedAgo(61, 60), now, clock)).toBe(true);
  });

  it("is stalled when a lease longer than the threshold was not renewed past the threshold", () => {
    const long = { thresholdSeconds: 600, leaseSeconds: 3600 };
    expect(isStepStalled(renewedAgo(600, 3600), now, long)).toBe(false);
    expect(isStepStalled(renewedAgo(600.001, 3600), now, long)).toBe(true);
  });

  it("measures a step without a lease (sent back by a reviewer) from its last change", () => {
    const sentBack = (changed: number) => ({
      status: "in_progress" as const,
      startedAt: ago(100_000),
      leaseExpiresAt: null,
      updatedAt: ago(changed),
    });
    expect(isStepStalled(sentBack(600), now, clock)).toBe(false);
    expect(isStepStalled(sentBack(600.001), now, clock)).toBe(true);
  });

  it("is false for a step that is not in progress", () => {
    for (const status of ["pending", "awaiting_input", "completed", "skipped", "failed"] as const) {
      expect(isStepStalled({ ...renewedAgo(10_000), status }, now, clock)).toBe(false);
    }
  });

  it("is false with nothing valid to measure", () => {
    const none = { status: "in_progress" as const, startedAt: null, leaseExpiresAt: null };
    expect(isStepStalled({ ...none, updatedAt: null }, now, clock)).toBe(false);
    expect(isStepStalled({ ...none, updatedAt: new Date(Number.NaN) }, now, clock)).toBe(false);
  });

  it("is false for a last change in the future (clock skew)", () => {
    const step = { status: "in_progress" as const, startedAt: null, leaseExpiresAt: null };
    expect(
      isStepStalled({ ...step, updatedAt: ago(-60) }, now, { ...clock, thresholdSeconds: 0 }),
    ).toBe(false);
  });
});

describe("stallWarnings", () => {
  const now = new Date("2025-01-01T12:00:00.000Z");
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  const clock = { thresholdSeconds: 600, leaseSeconds: 600 };
  const step = (id: string, stepOrder: number, startedAt: number, renewed: number | null) => ({
    id,
    stepOrder,
    status: "in_progress" as const,
    startedAt: ago(startedAt),
    leaseExpiresAt: renewed === null ? null : ago(renewed - 600),
    updatedAt: ago(startedAt),
  });

  it("warns for each stalled step in step order, with whole seconds", () => {
    const steps: StallCandidate[] = [
      step("s3", 3, 900.9, 700.5),
      { ...step("s1", 1, 5000, 5000), status: "completed" },
      step("s2", 2, 3600, 3600),
      step("s4", 4, 3600, 300),
      step("s5", 5, 300, null),
    ];
    expect(stallWarnings(steps, now, clock)).toEqual([
      { stepId: "s2", stepOrder: 2, inProgressSeconds: 3600, idleSeconds: 3600 },
      { stepId: "s3", stepOrder: 3, inProgressSeconds: 900, idleSeconds: 700 },
    ]);
  });

  it("is empty when nothing is stalled", () => {
    expect(stallWarnings([], now, clock)).toEqual([]);
  });
});

describe("stalls under lease renewals (property)", () => {
  it("never flags a holder that renews in time, and flags one that stops", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 3600 }),
        fc.integer({ min: 2, max: 3600 }),
        fc.array(fc.double({ min: 0, max: 0.99, noNaN: true }), { minLength: 1, maxLength: 40 }),
        (thresholdSeconds, leaseSeconds, gaps) => {
          const clock = { thresholdSeconds, leaseSeconds };
          const limit = Math.min(thresholdSeconds, leaseSeconds);
          const start = Date.parse("2026-01-01T00:00:00.000Z");
          let renewedAt = start;
          for (const gap of gaps) {
            // Checked just before the next renewal, which comes within the lease and the threshold.
            const now = new Date(renewedAt + gap * limit * 1000);
            const step = {
              status: "in_progress" as const,
              startedAt: new Date(start),
              leaseExpiresAt: new Date(renewedAt + leaseSeconds * 1000),
              updatedAt: new Date(start),
            };
            expect(isStepStalled(step, now, clock)).toBe(false);
            renewedAt = now.getTime();
          }
          // The holder stops renewing: past the lease or the threshold, the step is stalled.
          const silent = {
            status: "in_progress" as const,
            startedAt: new Date(start),
            leaseExpiresAt: new Date(renewedAt + leaseSeconds * 1000),
            updatedAt: new Date(start),
          };
          expect(isStepStalled(silent, new Date(renewedAt + limit * 1000 + 1), clock)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
