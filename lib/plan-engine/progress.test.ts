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

  it("is true only past the threshold, not at it", () => {
    expect(isStepStalled({ status: "in_progress", startedAt: ago(600) }, now, 600)).toBe(false);
    expect(isStepStalled({ status: "in_progress", startedAt: ago(600.001) }, now, 600)).toBe(true);
    expect(isStepStalled({ status: "in_progress", startedAt: ago(599) }, now, 600)).toBe(false);
  });

  it("is false for a step that is not in progress", () => {
    for (const status of ["pending", "awaiting_input", "completed", "skipped", "failed"] as const) {
      expect(isStepStalled({ status, startedAt: ago(10_000) }, now, 600)).toBe(false);
    }
  });

  it("is false without a valid start time", () => {
    expect(isStepStalled({ status: "in_progress", startedAt: null }, now, 600)).toBe(false);
    expect(
      isStepStalled({ status: "in_progress", startedAt: new Date(Number.NaN) }, now, 600),
    ).toBe(false);
  });

  it("is false for a start time in the future (clock skew)", () => {
    expect(isStepStalled({ status: "in_progress", startedAt: ago(-60) }, now, 0)).toBe(false);
  });
});

describe("stallWarnings", () => {
  const now = new Date("2025-01-01T12:00:00.000Z");
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);

  it("warns for each stalled step in step order, with whole seconds", () => {
    const steps: StallCandidate[] = [
      { id: "s3", stepOrder: 3, status: "in_progress", startedAt: ago(900.9) },
      { id: "s1", stepOrder: 1, status: "completed", startedAt: ago(5000) },
      { id: "s2", stepOrder: 2, status: "in_progress", startedAt: ago(3600) },
      { id: "s4", stepOrder: 4, status: "in_progress", startedAt: ago(300) },
      { id: "s5", stepOrder: 5, status: "in_progress", startedAt: null },
      { id: "s6", stepOrder: 6, status: "in_progress", startedAt: ago(600) },
    ];
    expect(stallWarnings(steps, now, 600)).toEqual([
      { stepId: "s2", stepOrder: 2, inProgressSeconds: 3600 },
      { stepId: "s3", stepOrder: 3, inProgressSeconds: 900 },
    ]);
  });

  it("is empty when nothing is stalled", () => {
    expect(stallWarnings([], now, 600)).toEqual([]);
  });
});
