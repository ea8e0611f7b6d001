import { describe, expect, it } from "vitest";
import { docTable } from "../docs-table";
import { AppError } from "./app-error";
import { PLAN_STATUSES, type PlanStatus, STEP_STATUSES, type StepStatus } from "./states";
import {
  canTransitionPlan,
  canTransitionStep,
  derivePlanStatus,
  isTerminalPlanStatus,
  isTerminalStepStatus,
  planTransitionPath,
  transitionPlan,
  transitionStep,
  VALID_PLAN_TRANSITIONS,
  VALID_STEP_TRANSITIONS,
} from "./transitions";

// The spec tables of docs/state-machines.md, written out a second time as pairs so
// that a typo in either copy makes the tests fail.
const SPEC_PLAN_PAIRS: ReadonlySet<string> = new Set([
  "planning->executing",
  "planning->failed",
  "executing->awaiting_review",
  "executing->stalled",
  "executing->completed",
  "executing->failed",
  "awaiting_review->executing",
  "awaiting_review->failed",
  "stalled->executing",
  "stalled->failed",
  // Cairn's additions (docs/state-machines.md): cancel, and re-opening a completed plan.
  "planning->cancelled",
  "executing->cancelled",
  "awaiting_review->cancelled",
  "stalled->cancelled",
  "completed->executing",
]);

const SPEC_STEP_PAIRS: ReadonlySet<string> = new Set([
  "pending->in_progress",
  "pending->skipped",
  "in_progress->awaiting_input",
  "in_progress->completed",
  "in_progress->failed",
  "awaiting_input->in_progress",
  "awaiting_input->completed",
  "awaiting_input->skipped",
  "awaiting_input->failed",
  "failed->pending",
]);

function pairs<S extends string>(values: readonly S[]): [S, S][] {
  return values.flatMap((from) => values.map((to): [S, S] => [from, to]));
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("plan state machine", () => {
  const all = pairs<PlanStatus>(PLAN_STATUSES);

  it("covers all 49 pairs, of which the spec's 10 and Cairn's 5 are valid", () => {
    expect(all).toHaveLength(49);
    const valid = all.filter(([from, to]) => canTransitionPlan(from, to));
    expect(valid.map(([from, to]) => `${from}->${to}`).sort()).toEqual([...SPEC_PLAN_PAIRS].sort());
    expect(valid).toHaveLength(15);
  });

  it("has exactly the table of the docs", () => {
    expect(VALID_PLAN_TRANSITIONS).toEqual({
      planning: ["executing", "failed", "cancelled"],
      executing: ["awaiting_review", "stalled", "completed", "failed", "cancelled"],
      awaiting_review: ["executing", "failed", "cancelled"],
      stalled: ["executing", "failed", "cancelled"],
      completed: ["executing"],
      failed: [],
      cancelled: [],
    });
  });

  it("is the table docs/state-machines.md gives, row by row", () => {
    const list = (cell: string) => cell.split(",").map((status) => status.trim());
    const documented = docTable("docs/state-machines.md", "from").flatMap(([from = "", to = ""]) =>
      list(from).flatMap((source) => list(to).map((target) => `${source}->${target}`)),
    );
    const valid = Object.entries(VALID_PLAN_TRANSITIONS).flatMap(([from, targets]) =>
      targets.map((to) => `${from}->${to}`),
    );
    expect(documented.sort()).toEqual(valid.sort());
  });

  it.each(all)("%s -> %s", (from, to) => {
    const valid = SPEC_PLAN_PAIRS.has(`${from}->${to}`);
    expect(canTransitionPlan(from, to)).toBe(valid);
    if (valid) {
      expect(transitionPlan(from, to)).toBe(to);
      return;
    }
    const error = thrown(() => transitionPlan(from, to));
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: "INVALID_TRANSITION",
      metadata: { entity: "plan", from, to },
    });
    expect((error as AppError).message).toContain(`Cannot move a plan from ${from} to ${to}`);
  });

  it("says a terminal state is terminal and names the allowed moves otherwise", () => {
    expect(thrown(() => transitionPlan("cancelled", "executing"))).toMatchObject({
      message: "Cannot move a plan from cancelled to executing (cancelled is terminal)",
    });
    expect(thrown(() => transitionPlan("planning", "completed"))).toMatchObject({
      message:
        "Cannot move a plan from planning to completed (from planning it may move to executing, failed, cancelled)",
    });
  });

  it("refuses a status string that is not a state without throwing a TypeError", () => {
    expect(canTransitionPlan("toString" as PlanStatus, "executing")).toBe(false);
    expect(thrown(() => transitionPlan("toString" as PlanStatus, "executing"))).toBeInstanceOf(
      AppError,
    );
  });

  it("knows its terminal states: only completed has a way out, re-opening", () => {
    expect(PLAN_STATUSES.filter(isTerminalPlanStatus)).toEqual([
      "completed",
      "failed",
      "cancelled",
    ]);
    expect(VALID_PLAN_TRANSITIONS.completed).toEqual(["executing"]);
    expect(VALID_PLAN_TRANSITIONS.failed).toEqual([]);
    expect(VALID_PLAN_TRANSITIONS.cancelled).toEqual([]);
  });

  it("never re-opens a completed plan on the way to another status", () => {
    expect(() => planTransitionPath("completed", "failed")).toThrow(AppError);
    expect(planTransitionPath("completed", "executing")).toEqual(["executing"]);
  });
});

describe("step state machine", () => {
  const all = pairs<StepStatus>(STEP_STATUSES);

  it("covers all 36 pairs, of which the spec's 10 are valid", () => {
    expect(all).toHaveLength(36);
    const valid = all.filter(([from, to]) => canTransitionStep(from, to));
    expect(valid.map(([from, to]) => `${from}->${to}`).sort()).toEqual([...SPEC_STEP_PAIRS].sort());
    expect(valid).toHaveLength(10);
  });

  it("has exactly the table of the spec", () => {
    expect(VALID_STEP_TRANSITIONS).toEqual({
      pending: ["in_progress", "skipped"],
      in_progress: ["awaiting_input", "completed", "failed"],
      awaiting_input: ["in_progress", "completed", "skipped", "failed"],
      completed: [],
      skipped: [],
      failed: ["pending"],
    });
  });

  it.each(all)("%s -> %s", (from, to) => {
    const valid = SPEC_STEP_PAIRS.has(`${from}->${to}`);
    expect(canTransitionStep(from, to)).toBe(valid);
    if (valid) {
      expect(transitionStep(from, to)).toBe(to);
      return;
    }
    const error = thrown(() => transitionStep(from, to));
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: "INVALID_TRANSITION",
      metadata: { entity: "step", from, to },
    });
    expect((error as AppError).message).toContain(`Cannot move a step from ${from} to ${to}`);
  });

  it("allows the retry path failed -> pending and nothing else out of failed", () => {
    expect(VALID_STEP_TRANSITIONS.failed).toEqual(["pending"]);
  });

  it("counts failed as terminal along with completed and skipped", () => {
    expect(STEP_STATUSES.filter(isTerminalStepStatus)).toEqual(["completed", "skipped", "failed"]);
  });
});

describe("derivePlanStatus", () => {
  it("returns planning for a plan without steps", () => {
    expect(derivePlanStatus([])).toBe("planning");
  });

  it("continues executing when a step has failed", () => {
    expect(derivePlanStatus(["completed", "failed", "pending"])).toBe("executing");
  });

  it("returns completed if all steps are terminal", () => {
    expect(derivePlanStatus(["completed", "failed", "skipped"])).toBe("completed");
  });

  it("prioritizes awaiting_input even when a step has failed", () => {
    expect(derivePlanStatus(["failed", "awaiting_input"])).toBe("awaiting_review");
  });

  it.each<[StepStatus[], string]>([
    [["pending"], "executing"],
    [["in_progress"], "executing"],
    [["completed"], "completed"],
    [["skipped"], "completed"],
    [["failed"], "completed"],
    [["failed", "failed"], "completed"],
    [["awaiting_input"], "awaiting_review"],
    [["completed", "awaiting_input", "completed"], "awaiting_review"],
    [["awaiting_input", "pending", "in_progress"], "awaiting_review"],
    [["completed", "in_progress"], "executing"],
    [["completed", "completed", "pending"], "executing"],
    [["skipped", "skipped", "completed"], "completed"],
  ])("%j -> %s", (statuses, expected) => {
    expect(derivePlanStatus(statuses)).toBe(expected);
  });

  it("never derives stalled or failed", () => {
    const seen = new Set<string>();
    for (const a of STEP_STATUSES) {
      seen.add(derivePlanStatus([a]));
      for (const b of STEP_STATUSES) seen.add(derivePlanStatus([a, b]));
    }
    expect([...seen].sort()).toEqual(["awaiting_review", "completed", "executing"]);
  });
});

describe("planTransitionPath", () => {
  it("is empty when the status does not change", () => {
    expect(planTransitionPath("executing", "executing")).toEqual([]);
  });
  it("is the direct move when the table allows it", () => {
    expect(planTransitionPath("executing", "completed")).toEqual(["completed"]);
    expect(planTransitionPath("awaiting_review", "failed")).toEqual(["failed"]);
  });
  it("resumes through executing where the table requires it", () => {
    expect(planTransitionPath("planning", "completed")).toEqual(["executing", "completed"]);
    expect(planTransitionPath("stalled", "completed")).toEqual(["executing", "completed"]);
    expect(planTransitionPath("awaiting_review", "completed")).toEqual(["executing", "completed"]);
    expect(planTransitionPath("stalled", "awaiting_review")).toEqual([
      "executing",
      "awaiting_review",
    ]);
  });
  it("refuses moves out of terminal states, but re-opening", () => {
    expect(() => planTransitionPath("completed", "awaiting_review")).toThrow(AppError);
    expect(() => planTransitionPath("failed", "completed")).toThrow(/failed is terminal/);
    expect(() => planTransitionPath("cancelled", "executing")).toThrow(/cancelled is terminal/);
  });
});
