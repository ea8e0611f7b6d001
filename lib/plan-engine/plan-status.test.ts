import { describe, expect, it } from "vitest";
import { plan } from "@/tests/support/plan-snapshots";
import type { AwaitingSteps } from "./plan-snapshot";
import { decidePlanStatusAfterModify, isLastOpenStep } from "./plan-status";

describe("decidePlanStatusAfterModify", () => {
  it("refuses to leave a plan without steps, with a reason", () => {
    expect(() => decidePlanStatusAfterModify(plan([]), "remove_step", [])).toThrow(
      /keeps at least one/,
    );
  });

  it("keeps a planning plan planning until a step starts", () => {
    expect(
      decidePlanStatusAfterModify(plan([], { status: "planning" }), "add_steps", ["pending"]),
    ).toEqual({ planStatus: "planning", awaitingSteps: null });
  });

  it("ends the wait on add_steps when steps are added or declined", () => {
    const awaiting: AwaitingSteps = {
      conditionId: "c",
      conditionExpression: "x",
      stepId: "s1",
      stepOrder: 1,
      params: {},
    };
    const waiting = plan([], { awaitingSteps: awaiting });
    expect(
      decidePlanStatusAfterModify(waiting, "decline_add_steps", ["completed"]).planStatus,
    ).toBe("completed");
    expect(decidePlanStatusAfterModify(waiting, "add_steps", ["completed", "pending"])).toEqual({
      planStatus: "executing",
      awaitingSteps: null,
    });
    expect(decidePlanStatusAfterModify(waiting, "reorder_steps", ["completed"])).toEqual({
      planStatus: "executing",
      awaitingSteps: awaiting,
    });
  });
});

describe("isLastOpenStep", () => {
  it("is true only when every other step has ended", () => {
    const steps = [
      { id: "a", status: "completed" as const },
      { id: "b", status: "awaiting_input" as const },
      { id: "c", status: "skipped" as const },
    ];
    expect(isLastOpenStep(steps, "b")).toBe(true);
    expect(isLastOpenStep([...steps, { id: "d", status: "pending" as const }], "b")).toBe(false);
  });
});
