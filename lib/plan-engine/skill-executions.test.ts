import { describe, expect, it } from "vitest";
import { AppError } from "./app-error";
import {
  decideSkillExecutionUpdate,
  isTerminalSkillExecutionStatus,
  metadataText,
  SKILL_EXECUTION_STATUSES,
  type SkillExecutionStatus,
  VALID_SKILL_EXECUTION_TRANSITIONS,
} from "./skill-executions";

// The lifecycle of the brief, written out a second time as pairs so that a typo
// in either copy makes the test fail.
const ALLOWED = new Set([
  "started->executing",
  "started->completed",
  "started->failed",
  "executing->completed",
  "executing->failed",
]);

const full = { closedReason: "done", errorMessage: "broke" };

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (error) {
    return error instanceof AppError ? error.code : "not an AppError";
  }
}

describe("the skill-execution state machine", () => {
  it("allows exactly the lifecycle's moves", () => {
    for (const from of SKILL_EXECUTION_STATUSES) {
      for (const to of SKILL_EXECUTION_STATUSES) {
        const pair = `${from}->${to}`;
        expect(VALID_SKILL_EXECUTION_TRANSITIONS[from].includes(to), pair).toBe(ALLOWED.has(pair));
      }
    }
  });

  it("treats completed and failed as final, refusing even a metadata-only update", () => {
    for (const from of ["completed", "failed"] as SkillExecutionStatus[]) {
      expect(isTerminalSkillExecutionStatus(from)).toBe(true);
      for (const to of SKILL_EXECUTION_STATUSES) {
        expect(codeOf(() => decideSkillExecutionUpdate({ from, to, ...full }))).toBe(
          "INVALID_TRANSITION",
        );
      }
    }
  });

  it("lets an open record keep its status to add metadata", () => {
    expect(decideSkillExecutionUpdate({ from: "started", to: "started" })).toEqual({
      statusChanges: false,
    });
    expect(decideSkillExecutionUpdate({ from: "executing", to: "executing" })).toEqual({
      statusChanges: false,
    });
  });

  it("refuses a move back and names the allowed ones", () => {
    expect(() => decideSkillExecutionUpdate({ from: "executing", to: "started" })).toThrow(
      /from executing it may move to completed, failed/,
    );
  });

  it("needs an errorMessage to fail and a closedReason to complete without a plan", () => {
    expect(codeOf(() => decideSkillExecutionUpdate({ from: "started", to: "failed" }))).toBe(
      "VALIDATION_ERROR",
    );
    expect(codeOf(() => decideSkillExecutionUpdate({ from: "executing", to: "failed" }))).toBe(
      "VALIDATION_ERROR",
    );
    expect(codeOf(() => decideSkillExecutionUpdate({ from: "started", to: "completed" }))).toBe(
      "VALIDATION_ERROR",
    );
    expect(
      decideSkillExecutionUpdate({
        from: "started",
        to: "completed",
        closedReason: "use existing",
      }),
    ).toEqual({ statusChanges: true });
    expect(decideSkillExecutionUpdate({ from: "executing", to: "completed" })).toEqual({
      statusChanges: true,
    });
    expect(
      decideSkillExecutionUpdate({ from: "started", to: "failed", errorMessage: "no sources" }),
    ).toEqual({ statusChanges: true });
  });
});

describe("metadataText", () => {
  it("reads a string field, empty ones included", () => {
    expect(metadataText({ topic: "Rust", scope: "" }, "topic")).toBe("Rust");
    expect(metadataText({ topic: "Rust", scope: "" }, "scope")).toBe("");
  });

  it("answers null for a missing field, another type, or no metadata", () => {
    expect(metadataText({ topic: 5 }, "topic")).toBeNull();
    expect(metadataText({}, "topic")).toBeNull();
    expect(metadataText(null, "topic")).toBeNull();
    expect(metadataText(undefined, "topic")).toBeNull();
  });
});
