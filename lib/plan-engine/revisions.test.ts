import { describe, expect, it } from "vitest";
import { codeNames, docTable } from "../docs-table";
import {
  type ComparedDefinition,
  DIFF_ENTRIES,
  DIFF_VALUE_CHARS,
  definitionsCompared,
  definitionsShown,
  diffRevision,
  diffValue,
  type RevisionEntry,
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

type Definition = Omit<RevisionStep, "id" | "stepOrder">;

/** Each step as a revision names it: by its digest (here its definition's JSON). */
function entriesOf(steps: readonly RevisionStep[], all: Map<string, Definition>): RevisionEntry[] {
  return steps.map(({ id, stepOrder, ...definition }) => {
    const digest = JSON.stringify(definition);
    all.set(digest, definition);
    return { id, stepOrder, digest };
  });
}

/**
 * The diff of two lists of whole steps, as recordRevision makes it: only the
 * fingerprints `definitionsCompared` names and the cut values
 * `definitionsShown` names handed to the diff; and the digests it read.
 */
function diffAndReads(
  before: readonly RevisionStep[] | null,
  after: readonly RevisionStep[],
  marked: Parameters<typeof diffRevision>[4] = [],
) {
  const all = new Map<string, Definition>();
  const old = before && entriesOf(before, all);
  const now = entriesOf(after, all);
  const definition = (digest: string) => {
    const found = all.get(digest);
    if (!found) throw new Error(`no definition ${digest}`);
    return found;
  };
  const comparedDigests = definitionsCompared(old, now);
  const compared = new Map<string, ComparedDefinition>(
    comparedDigests.map((digest) => [
      digest,
      {
        instructions: definition(digest).instructions,
        arguments: JSON.stringify(definition(digest).arguments),
      },
    ]),
  );
  const shownDigests = definitionsShown(old, now, compared);
  const shown = new Map<string, ShownDefinition>(
    shownDigests.map((digest) => [
      digest,
      {
        stepType: definition(digest).stepType,
        instructions: diffValue(definition(digest).instructions),
        arguments: diffValue(definition(digest).arguments),
      },
    ]),
  );
  return {
    diff: diffRevision(old, now, compared, shown, marked),
    compared: comparedDigests,
    shown: shownDigests,
  };
}

const diffSteps = (...args: Parameters<typeof diffAndReads>) => diffAndReads(...args).diff;

const digestOf = ({ id: _id, stepOrder: _order, ...definition }: RevisionStep) =>
  JSON.stringify(definition);

describe("diffRevision", () => {
  it("compares changed steps by fingerprint, and reads the definitions of shown steps only", () => {
    const before = [step("a", 1), step("b", 2), step("c", 3), step("e", 4)];
    const rebound = { ...step("e", 4), inputs: { x: "{{steps.1.result.x}}" } };
    const after = [step("a", 1, "changed"), step("c", 2), step("d", 3), rebound];
    const reads = diffAndReads(before, after);
    expect(new Set(reads.compared)).toEqual(
      new Set([before[0], after[0], before[3], rebound].map((s) => digestOf(s as RevisionStep))),
    );
    // The step whose inputs alone changed is compared, never shown.
    expect(new Set(reads.shown)).toEqual(
      new Set([before[0], after[0], before[1], after[2]].map((s) => digestOf(s as RevisionStep))),
    );
    expect(reads.diff.instructions.map((entry) => entry.stepId)).toEqual(["a"]);
    expect(reads.diff.arguments).toEqual([]);
  });

  it("shows the first changed steps of each list and counts the rest, reading only those shown", () => {
    const count = DIFF_ENTRIES + 5;
    const before = Array.from({ length: count }, (_, i) => ({
      ...step(`s${i}`, i + 1, "x".repeat(DIFF_VALUE_CHARS * 10)),
      arguments: { query: `q${i}` },
    }));
    const after = before.map((s, i) => ({
      ...s,
      instructions: `${i}${s.instructions}`,
      arguments: {},
    }));
    const reads = diffAndReads(before, after);
    expect(reads.compared).toHaveLength(count * 2);
    expect(reads.shown).toHaveLength(DIFF_ENTRIES * 2);
    expect(reads.diff.instructions).toHaveLength(DIFF_ENTRIES);
    expect(reads.diff.arguments).toHaveLength(DIFF_ENTRIES);
    expect(reads.diff.omitted).toBe(10);
    expect(reads.diff.instructions[0]?.to).toEqual({
      text: `0${"x".repeat(DIFF_VALUE_CHARS - 1)}`,
      cut: true,
    });
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

describe("docs/history-and-forks.md's table of a diff's lists", () => {
  it("names each list a diff has, and the entries kept of each", () => {
    const rows = docTable("docs/history-and-forks.md", "list");
    const diff = diffRevision(null, [], new Map(), new Map());
    expect(rows.flatMap(([list = ""]) => codeNames(list))).toEqual(Object.keys(diff));
    const omitted = rows.find(([list]) => list === "`omitted`")?.[1];
    expect(omitted).toBe(`entries left out beyond ${DIFF_ENTRIES} per list`);
  });
});
