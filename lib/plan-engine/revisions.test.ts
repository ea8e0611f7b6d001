import { describe, expect, it } from "vitest";
import {
  DIFF_ENTRIES,
  DIFF_VALUE_CHARS,
  definitionsShown,
  diffRevision,
  diffValue,
  type RevisionStep,
  revisionOf,
  type ShownDefinition,
} from "./revisions";

const step = (id: string, stepOrder: number, instructions = `do ${id}`): RevisionStep => ({
  id,
  stepOrder,
  stepType: "analyze",
  instructions,
  tool: null,
  arguments: null,
  inputs: null,
  outputSchema: null,
});

/**
 * The diff of two lists of whole steps, as recordRevision makes it: each step
 * by its digest (here its definition's JSON), and only the definitions
 * `definitionsShown` names handed to the diff.
 */
function diffSteps(
  before: readonly RevisionStep[] | null,
  after: readonly RevisionStep[],
  marked: Parameters<typeof diffRevision>[3] = [],
) {
  const all = new Map<string, ShownDefinition>();
  const entries = (steps: readonly RevisionStep[]) =>
    steps.map(({ id, stepOrder, ...definition }) => {
      const digest = JSON.stringify(definition);
      all.set(digest, definition);
      return { id, stepOrder, digest };
    });
  const old = before && entries(before);
  const now = entries(after);
  const shown = new Map<string, ShownDefinition>();
  for (const digest of definitionsShown(old, now)) {
    const definition = all.get(digest);
    if (definition) shown.set(digest, definition);
  }
  return diffRevision(old, now, shown, marked);
}

describe("diffRevision", () => {
  it("reads the definitions of changed, added and removed steps only", () => {
    const before = [step("a", 1), step("b", 2), step("c", 3)];
    const after = [step("a", 1, "changed"), step("c", 2), step("d", 3)];
    const digestOf = (s: RevisionStep) => {
      const { id: _id, stepOrder: _order, ...definition } = s;
      return JSON.stringify(definition);
    };
    const entry = (s: RevisionStep) => ({ id: s.id, stepOrder: s.stepOrder, digest: digestOf(s) });
    expect(new Set(definitionsShown(before.map(entry), after.map(entry)))).toEqual(
      new Set([before[0], after[0], before[1], after[2]].map((s) => digestOf(s as RevisionStep))),
    );
  });

  it("makes every step of the first revision an addition", () => {
    const diff = diffSteps(null, [step("a", 1), step("b", 2)]);
    expect(diff.added.map((s) => s.stepId)).toEqual(["a", "b"]);
    expect(diff.added[0]?.instructions).toEqual({ text: "do a", cut: false });
    expect(diff.moved).toEqual([]);
  });

  it("reports an added step without calling the steps it pushed down moved", () => {
    const before = [step("a", 1), step("b", 2)];
    const after = [step("n", 1), step("a", 2), step("b", 3)];
    const diff = diffSteps(before, after);
    expect(diff.added.map((s) => [s.stepId, s.stepOrder])).toEqual([["n", 1]]);
    expect(diff.moved).toEqual([]);
  });

  it("reports a removed step, and the steps that changed places among the kept ones", () => {
    const before = [step("a", 1), step("b", 2), step("c", 3), step("d", 4)];
    const after = [step("a", 1), step("d", 2), step("c", 3)];
    const diff = diffSteps(before, after);
    expect(diff.removed).toEqual([
      { stepId: "b", stepOrder: 2, instructions: { text: "do b", cut: false } },
    ]);
    expect(diff.moved).toEqual([
      { stepId: "d", from: 4, to: 2 },
      { stepId: "c", from: 3, to: 3 },
    ]);
  });

  it("gives instructions and arguments old and new, and the statuses the change set", () => {
    const before = [{ ...step("a", 1), arguments: { query: "cost" } }, step("b", 2)];
    const after = [{ ...step("a", 1), arguments: { query: "price" } }, step("b", 2, "new")];
    const diff = diffSteps(before, after, [{ stepId: "a", to: "skipped" }]);
    expect(diff.instructions).toEqual([
      {
        stepId: "b",
        stepOrder: 2,
        from: { text: "do b", cut: false },
        to: { text: "new", cut: false },
      },
    ]);
    expect(diff.arguments).toEqual([
      {
        stepId: "a",
        stepOrder: 1,
        from: { text: '{"query":"cost"}', cut: false },
        to: { text: '{"query":"price"}', cut: false },
      },
    ]);
    expect(diff.status).toEqual([{ stepId: "a", stepOrder: 1, to: "skipped" }]);
  });

  it("stays bounded: long values cut, lists capped with the rest counted", () => {
    const long = "x".repeat(DIFF_VALUE_CHARS * 10);
    const steps = Array.from({ length: DIFF_ENTRIES + 5 }, (_, i) => step(`s${i}`, i + 1, long));
    const diff = diffSteps(null, steps);
    expect(diff.added).toHaveLength(DIFF_ENTRIES);
    expect(diff.omitted).toBe(5);
    expect(diff.added[0]?.instructions).toEqual({ text: "x".repeat(DIFF_VALUE_CHARS), cut: true });
  });

  it("never cuts a character in two", () => {
    const value = diffValue("😀".repeat(DIFF_VALUE_CHARS + 1));
    expect(value?.cut).toBe(true);
    expect(Array.from(value?.text ?? "")).toHaveLength(DIFF_VALUE_CHARS);
  });
});

describe("revisionOf", () => {
  it("makes a revision of a change to the definition, with its rationale and statuses", () => {
    expect(
      revisionOf([
        {
          eventType: "step_failed",
          planId: "p",
          stepId: "s",
          payload: { stepOrder: 1, reason: "r", source: "fail_step" },
        },
        {
          eventType: "plan_modified",
          planId: "p",
          stepId: "s",
          payload: { action: "fail_step", modificationRationale: "why" },
        },
      ]),
    ).toEqual({
      planId: "p",
      cause: "fail_step",
      rationale: "why",
      marked: [{ stepId: "s", to: "failed" }],
    });
  });

  it("makes one of a review's modify, skip or reject, and none of an approve", () => {
    const decision = (decision: "approve" | "modify" | "skip" | "reject") =>
      revisionOf([
        {
          eventType: "user_reviewed",
          planId: "p",
          stepId: "s",
          payload: {
            action: "decision",
            reviewRequestId: "r",
            decision,
            feedback: "look again",
            channel: "web",
            reviewDigest: "d",
            decisionPolicy: "people_only",
          },
        },
      ]);
    expect(decision("approve")).toBeNull();
    expect(decision("modify")).toMatchObject({ cause: "review_modify", rationale: "look again" });
    expect(decision("skip")?.marked).toEqual([{ stepId: "s", to: "skipped" }]);
    expect(decision("reject")?.marked).toEqual([{ stepId: "s", to: "failed" }]);
  });

  it("makes none of a stall, a cancel or a step's result", () => {
    expect(
      revisionOf([
        { eventType: "plan_modified", planId: "p", payload: { action: "stall_detected" } },
        { eventType: "plan_modified", planId: "p", payload: { action: "cancelled" } },
      ]),
    ).toBeNull();
  });

  it("makes the branch's skips one revision of the plan whose steps they are", () => {
    expect(
      revisionOf([
        {
          eventType: "plan_modified",
          planId: "p",
          stepId: "s",
          payload: { action: "branch_skipped_steps", skippedStepIds: ["t", "u"] },
        },
      ]),
    ).toEqual({
      planId: "p",
      cause: "branch_skipped_steps",
      rationale: null,
      marked: [
        { stepId: "t", to: "skipped" },
        { stepId: "u", to: "skipped" },
      ],
    });
  });
});
