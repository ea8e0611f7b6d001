import { describe, expect, it } from "vitest";
import { codeNames, docTable } from "../docs-table";
import {
  AUDIT_EVENT_TYPES,
  DECISION_CHANNELS,
  isAuditEventType,
  isPlanStatus,
  isReviewDecision,
  isStepStatus,
  isStepType,
  OPEN_STEP_STATUSES,
  PLAN_STATUSES,
  REVIEW_DECISIONS,
  STEP_STATUSES,
  STEP_TYPES,
  TERMINAL_PLAN_STATUSES,
  TERMINAL_STEP_STATUSES,
} from "./states";

describe("vocabularies", () => {
  it("lists the states, types, events and decisions of the spec", () => {
    expect(PLAN_STATUSES).toEqual([
      "planning",
      "executing",
      "awaiting_review",
      "stalled",
      "completed",
      "failed",
      "cancelled",
    ]);
    expect(STEP_STATUSES).toEqual([
      "pending",
      "in_progress",
      "awaiting_input",
      "completed",
      "skipped",
      "failed",
    ]);
    expect(STEP_TYPES).toEqual([
      "search",
      "extract",
      "analyze",
      "critique",
      "synthesize",
      "checkpoint",
      "custom",
    ]);
    expect(TERMINAL_STEP_STATUSES).toEqual(["completed", "skipped", "failed"]);
    // Open, awaiting a person, or terminal: each status is exactly one of them.
    expect(OPEN_STEP_STATUSES).toEqual(["pending", "in_progress"]);
    expect([...OPEN_STEP_STATUSES, "awaiting_input", ...TERMINAL_STEP_STATUSES].toSorted()).toEqual(
      [...STEP_STATUSES].toSorted(),
    );
    expect(TERMINAL_PLAN_STATUSES).toEqual(["completed", "failed", "cancelled"]);
    // The spec's eight, and Cairn's record of a step's evidence (docs/evidence.md).
    expect(AUDIT_EVENT_TYPES).toEqual([
      "step_started",
      "step_completed",
      "step_failed",
      "plan_modified",
      "user_reviewed",
      "session_resumed",
      "skill_started",
      "skill_completed",
      "evidence_recorded",
      "output_stored",
    ]);
    expect(REVIEW_DECISIONS).toEqual(["approve", "reject", "modify", "skip"]);
  });

  it("guards accept members and refuse everything else, prototype names included", () => {
    for (const status of PLAN_STATUSES) expect(isPlanStatus(status)).toBe(true);
    for (const status of STEP_STATUSES) expect(isStepStatus(status)).toBe(true);
    for (const type of STEP_TYPES) expect(isStepType(type)).toBe(true);
    for (const decision of REVIEW_DECISIONS) expect(isReviewDecision(decision)).toBe(true);
    for (const event of AUDIT_EVENT_TYPES) expect(isAuditEventType(event)).toBe(true);
    for (const value of ["", "toString", "constructor", "PENDING", null, undefined, 1, {}]) {
      expect(isPlanStatus(value)).toBe(false);
      expect(isStepStatus(value)).toBe(false);
      expect(isStepType(value)).toBe(false);
      expect(isReviewDecision(value)).toBe(false);
      expect(isAuditEventType(value)).toBe(false);
    }
  });
});

describe("docs/reviews.md's table of channels", () => {
  it("gives each decision channel, once, in order", () => {
    const channels = docTable("docs/reviews.md", "channel").map(([channel = ""]) =>
      codeNames(channel).join(),
    );
    expect(channels).toEqual([...DECISION_CHANNELS]);
  });
});
