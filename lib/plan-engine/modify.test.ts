import { describe, expect, it } from "vitest";
import { decideModify } from "./modify";
import type { ModifyEvent, ModifyStep } from "./modify-change";
import type { AwaitingSteps } from "./plan-snapshot";
import type { PlanStatus, StepStatus } from "./states";

const steps = (...statuses: StepStatus[]): ModifyStep[] =>
  statuses.map((status, i) => ({
    id: `s${i + 1}`,
    stepOrder: i + 1,
    stepType: "search",
    status,
    instructions: `Step ${i + 1}.`,
    failureReason: status === "failed" ? "broke" : null,
    arguments: null,
    inputs: null,
  }));

const plan = (status: PlanStatus = "executing", awaitingSteps: AwaitingSteps | null = null) => ({
  id: "p",
  status,
  awaitingSteps,
});

const event = (action: ModifyEvent["action"], extra: Partial<ModifyEvent> = {}): ModifyEvent => ({
  action,
  modificationRationale: "Because.",
  ...extra,
});

describe("decideModify", () => {
  it("inserts steps after the given order and renumbers the rest", () => {
    const decided = decideModify(
      plan(),
      steps("completed", "pending"),
      event("add_steps", {
        insertAfterOrder: 1,
        steps: [{ id: "n1", stepType: "analyze", instructions: "New." }],
      }),
    );
    expect(decided.steps.map((s) => `${s.id}:${s.stepOrder}`)).toEqual(["s1:1", "n1:2", "s2:3"]);
    expect(decided.ops).toContainEqual({ op: "insert", steps: [{ id: "n1", stepOrder: 2 }] });
    expect(decided.audit[0]?.payload).toMatchObject({ action: "add_steps", addedStepIds: ["n1"] });
    expect(() =>
      decideModify(
        plan(),
        steps("pending"),
        event("add_steps", { insertAfterOrder: 5, steps: [] }),
      ),
    ).toThrow(expect.objectContaining({ code: "INVALID_STEP_REFERENCE" }));
  });

  it("removes only a pending step, and never the only one", () => {
    const removed = decideModify(
      plan(),
      steps("completed", "pending"),
      event("remove_step", { stepId: "s2" }),
    );
    expect(removed.planStatus).toBe("completed");
    expect(() =>
      decideModify(plan(), steps("in_progress"), event("remove_step", { stepId: "s1" })),
    ).toThrow(expect.objectContaining({ code: "INVALID_TRANSITION" }));
    expect(() =>
      decideModify(plan(), steps("pending"), event("remove_step", { stepId: "s1" })),
    ).toThrow(/keeps at least one/);
  });

  it("reorders only with every step named once", () => {
    const decided = decideModify(
      plan(),
      steps("pending", "pending"),
      event("reorder_steps", { stepIds: ["s2", "s1"] }),
    );
    expect(decided.steps.map((s) => s.id)).toEqual(["s2", "s1"]);
    expect(() =>
      decideModify(
        plan(),
        steps("pending", "pending"),
        event("reorder_steps", { stepIds: ["s1"] }),
      ),
    ).toThrow(/every step of the plan exactly once/);
  });

  it("fails a pending or in-progress step with its step_failed row, and retries a failed one", () => {
    const failed = decideModify(
      plan(),
      steps("pending", "completed"),
      event("fail_step", { stepId: "s1", reason: "Dead link." }),
    );
    expect(failed.audit.map((a) => a.eventType)).toEqual(["step_failed", "plan_modified"]);
    expect(failed.planStatus).toBe("completed");
    const retried = decideModify(
      plan(),
      steps("failed", "completed"),
      event("retry_step", { stepId: "s1" }),
    );
    expect(retried).toMatchObject({
      planStatus: "executing",
      ops: [{ op: "retry", stepId: "s1" }],
    });
  });

  it("lets a stalled plan's agent change it (which resumes it), and nothing touch a finished one", () => {
    expect(
      decideModify(plan("stalled"), steps("in_progress"), event("fail_step", { stepId: "s1" }))
        .planStatus,
    ).toBe("completed");
    expect(
      decideModify(
        plan("stalled"),
        steps("in_progress", "pending"),
        event("update_step_instructions", { stepId: "s2", instructions: "Sharper." }),
      ).planStatus,
    ).toBe("executing");
    expect(() =>
      decideModify(
        plan("completed"),
        steps("completed"),
        event("update_step_instructions", { stepId: "s1", instructions: "Again." }),
      ),
    ).toThrow(expect.objectContaining({ code: "PLAN_NOT_MODIFIABLE" }));
  });

  it("says so when failing the last open step ends the plan, and re-opens it on retry", () => {
    const failed = decideModify(
      plan("executing"),
      steps("completed", "in_progress"),
      event("fail_step", { stepId: "s2", reason: "Stuck." }),
    );
    expect(failed.planStatus).toBe("completed");
    expect(failed.planEnded).toMatch(/completed with step 2 failed.*retry_step/);
    expect(
      decideModify(
        plan("executing"),
        steps("in_progress", "pending"),
        event("fail_step", { stepId: "s1" }),
      ).planEnded,
    ).toBeUndefined();

    const reopened = decideModify(
      plan("completed"),
      steps("completed", "failed"),
      event("retry_step", { stepId: "s2" }),
    );
    expect(reopened).toMatchObject({
      planStatus: "executing",
      ops: [{ op: "retry", stepId: "s2" }],
    });
    expect(reopened.audit[0]?.payload).toMatchObject({
      action: "retry_step",
      reopened: true,
      previousPlanStatus: "completed",
      modificationRationale: "Because.",
    });
    // Only a retry re-opens; a plan that failed or was cancelled stays ended.
    for (const status of ["failed", "cancelled"] as const) {
      expect(() =>
        decideModify(
          plan(status),
          steps("completed", "failed"),
          event("retry_step", { stepId: "s2" }),
        ),
      ).toThrow(expect.objectContaining({ code: "PLAN_NOT_MODIFIABLE" }));
    }
    expect(() =>
      decideModify(
        plan("completed"),
        steps("completed", "failed"),
        event("add_steps", { steps: [] }),
      ),
    ).toThrow(expect.objectContaining({ code: "PLAN_NOT_MODIFIABLE" }));
  });

  it("ends a wait on add_steps when the agent declines", () => {
    const awaiting: AwaitingSteps = {
      conditionId: "c",
      conditionExpression: "result.gaps === true",
      stepId: "s1",
      stepOrder: 1,
      params: {},
    };
    const declined = decideModify(
      plan("executing", awaiting),
      steps("completed"),
      event("decline_add_steps"),
    );
    expect(declined).toMatchObject({ planStatus: "completed", awaitingSteps: null });
    expect(() => decideModify(plan(), steps("completed"), event("decline_add_steps"))).toThrow(
      /not waiting for steps/,
    );
  });

  it("moves bindings with their steps and refuses to orphan one", () => {
    const bound = steps("pending", "pending", "pending");
    bound[2] = { ...(bound[2] as ModifyStep), arguments: { q: "{{steps.2.result.query}}" } };
    const inserted = decideModify(
      plan(),
      bound,
      event("add_steps", {
        insertAfterOrder: 0,
        steps: [{ id: "n1", stepType: "search", instructions: "First." }],
      }),
    );
    expect(inserted.ops).toContainEqual({
      op: "setBindings",
      stepId: "s3",
      arguments: { q: "{{steps.3.result.query}}" },
    });
    expect(() => decideModify(plan(), bound, event("remove_step", { stepId: "s2" }))).toThrow(
      expect.objectContaining({ code: "INVALID_STEP_REFERENCE" }),
    );
    expect(() =>
      decideModify(plan(), bound, event("reorder_steps", { stepIds: ["s3", "s1", "s2"] })),
    ).toThrow(expect.objectContaining({ code: "INVALID_STEP_REFERENCE" }));
  });
});

describe("decideModify revert_revision", () => {
  const then = (ids: string[]) =>
    ids.map((id, i) => ({
      id,
      stepOrder: i + 1,
      stepType: "search" as const,
      instructions: `Step ${id.slice(1)}.`,
      tool: null,
      arguments: null,
      inputs: null,
      outputSchema: null,
    }));

  it("restores the unstarted steps' definitions, places and presence", () => {
    const now = steps("completed", "pending", "pending").map((s) =>
      s.id === "s2" ? { ...s, instructions: "Changed." } : s,
    );
    const decided = decideModify(
      plan(),
      now,
      event("revert_revision", { revert: { revision: 1, steps: then(["s1", "s4", "s2"]) } }),
    );
    expect(decided.steps.map((s) => [s.id, s.stepOrder, s.status])).toEqual([
      ["s1", 1, "completed"],
      ["s4", 2, "pending"],
      ["s2", 3, "pending"],
    ]);
    expect(decided.ops).toEqual(
      expect.arrayContaining([
        { op: "delete", stepId: "s3" },
        { op: "insert", steps: [{ id: "s4", stepOrder: 2 }] },
        { op: "setInstructions", stepId: "s2", instructions: "Step 2." },
      ]),
    );
    expect(decided.audit[0]?.payload).toMatchObject({
      action: "revert_revision",
      revision: 1,
      addedStepIds: ["s4"],
      removedStepIds: ["s3"],
    });
  });

  it("refuses a revert that would touch a started step, and a revision the plan lacks", () => {
    const now = steps("completed", "pending");
    expect(() =>
      decideModify(
        plan(),
        now,
        event("revert_revision", { revert: { revision: 1, steps: then(["s2"]) } }),
      ),
    ).toThrow(/Step 1 is completed, and reverting plan p to revision 1 would remove it/);
    expect(() =>
      decideModify(
        plan(),
        now,
        event("revert_revision", { revert: { revision: 2, steps: undefined } }),
      ),
    ).toThrow(/Plan p has no revision 2/);
    expect(() => decideModify(plan(), now, event("revert_revision"))).toThrow(
      /revert_revision needs revision/,
    );
  });
});
