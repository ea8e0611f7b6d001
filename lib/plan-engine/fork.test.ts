import { describe, expect, it } from "vitest";
import type { CarriedDecision } from "./checkpoint-guard";
import { carriedDecisionCounts } from "./checkpoint-guard";
import { decideFork, type ForkSourceStep } from "./fork";
import type { StepStatus, StepType } from "./states";

const step = (
  n: number,
  status: StepStatus,
  stepType: StepType = "analyze",
  decision: CarriedDecision | null = null,
): ForkSourceStep => ({
  id: `s${n}`,
  stepOrder: n,
  stepType,
  status,
  instructions: `Step ${n}.`,
  arguments: null,
  decision,
});

const decided = (over: Partial<CarriedDecision> = {}): CarriedDecision => ({
  decision: "approve",
  channel: "web",
  decidedDigest: "d1",
  currentDigest: "d1",
  ...over,
});

describe("decideFork", () => {
  it("carries the steps before the fork point and starts again there with the edits", () => {
    const fork = decideFork(
      "p",
      [step(1, "completed"), step(2, "failed"), step(3, "pending")],
      "s2",
      [{ stepId: "s2", instructions: "Compare by cost." }],
      "people_and_agents",
    );
    expect(fork.startOrder).toBe(2);
    expect(fork.reopened).toBeNull();
    expect(fork.steps.map((s) => [s.sourceStepId, s.carried, s.edited, s.instructions])).toEqual([
      ["s1", true, false, "Step 1."],
      ["s2", false, true, "Compare by cost."],
      ["s3", false, false, "Step 3."],
    ]);
  });

  it("treats an edit that gives a step what it has as none", () => {
    const fork = decideFork(
      "p",
      [step(1, "pending")],
      "s1",
      [{ stepId: "s1", instructions: "Step 1." }],
      "people_only",
    );
    expect(fork.steps[0]?.edited).toBe(false);
  });

  it("refuses an unfinished step before the fork point, an edit before it, a step twice, an empty edit, a stranger", () => {
    const steps = [step(1, "completed"), step(2, "in_progress"), step(3, "pending")];
    expect(() => decideFork("p", steps, "s3", [], "people_and_agents")).toThrow(
      /Step 2 of plan p is in_progress; a fork carries only steps that are completed or skipped/,
    );
    expect(() =>
      decideFork("p", steps, "s2", [{ stepId: "s1", instructions: "x" }], "people_and_agents"),
    ).toThrow(/Step 1 comes before step 2, where the fork starts/);
    expect(() =>
      decideFork(
        "p",
        steps,
        "s2",
        [
          { stepId: "s2", instructions: "x" },
          { stepId: "s2", instructions: "y" },
        ],
        "people_and_agents",
      ),
    ).toThrow(/names step 2 twice/);
    expect(() => decideFork("p", steps, "s2", [{ stepId: "s3" }], "people_and_agents")).toThrow(
      /changes nothing/,
    );
    expect(() =>
      decideFork("p", steps, "s2", [{ stepId: "x", instructions: "y" }], "people_and_agents"),
    ).toThrow(/not in plan p/);
    expect(() => decideFork("p", steps, "nope", [], "people_and_agents")).toThrow(/has no step/);
  });

  it("starts at a carried checkpoint whose decision does not count, with its reason", () => {
    const changed = [
      step(1, "completed", "checkpoint", decided({ currentDigest: "d2" })),
      step(2, "completed"),
      step(3, "pending"),
    ];
    const fork = decideFork("p", changed, "s3", [], "people_and_agents");
    expect(fork.startOrder).toBe(1);
    expect(fork.reopened?.reason).toMatch(/what checkpoint step 1 showed changed/);
    expect(fork.steps.every((s) => !s.carried)).toBe(true);
    const relayed = [step(1, "completed", "checkpoint", decided({ channel: "relayed" }))];
    expect(
      decideFork("p", [...relayed, step(2, "pending")], "s2", [], "people_only").reopened?.reason,
    ).toMatch(/decided by an agent relaying a person/);
  });
});

describe("carriedDecisionCounts", () => {
  it("counts an unchanged decision; under people_only only a person's", () => {
    expect(carriedDecisionCounts("people_and_agents", decided({ channel: "relayed" }))).toBe(true);
    expect(carriedDecisionCounts("people_and_agents", null)).toBe(true);
    expect(carriedDecisionCounts("people_and_agents", decided({ currentDigest: "d2" }))).toBe(
      false,
    );
    expect(carriedDecisionCounts("people_only", decided())).toBe(true);
    expect(carriedDecisionCounts("people_only", decided({ channel: "client" }))).toBe(true);
    expect(carriedDecisionCounts("people_only", decided({ channel: "relayed" }))).toBe(false);
    expect(carriedDecisionCounts("people_only", decided({ channel: "deadline" }))).toBe(false);
    expect(carriedDecisionCounts("people_only", null)).toBe(false);
    expect(carriedDecisionCounts("people_only", decided({ currentDigest: "d2" }))).toBe(false);
    expect(carriedDecisionCounts("people_only", decided({ decision: "skip" }))).toBe(true);
  });

  it("under people_only does not count a person's modify the agent then completed", () => {
    expect(carriedDecisionCounts("people_only", decided({ decision: "modify" }))).toBe(false);
    expect(
      carriedDecisionCounts("people_only", decided({ decision: "modify", channel: "client" })),
    ).toBe(false);
    expect(carriedDecisionCounts("people_and_agents", decided({ decision: "modify" }))).toBe(true);
    const modified = [step(1, "completed", "checkpoint", decided({ decision: "modify" }))];
    expect(
      decideFork("p", [...modified, step(2, "pending")], "s2", [], "people_only").reopened?.reason,
    ).toMatch(/handed back to the agent by a person's modify/);
  });
});
