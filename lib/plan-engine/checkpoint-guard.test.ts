import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Approval,
  approvalQuorum,
  checkDecisionNotHeld,
  checkOrderKeepsCheckpoints,
  checkPlanTakesWork,
  countedApprovals,
  heldBy,
  UNDECIDED_CHECKPOINT_STATUSES,
} from "./checkpoint-guard";
import { decideModify } from "./modify";
import { REVIEW_DECISIONS, STEP_STATUSES, type StepStatus } from "./states";

const step = (id: string, stepOrder: number, status: StepStatus, checkpoint = false) => ({
  id,
  stepOrder,
  stepType: checkpoint ? ("checkpoint" as const) : ("analyze" as const),
  status,
  instructions: id,
  failureReason: null,
  arguments: null,
  inputs: null,
});

const orders = (ids: string[]) => ids.map((id, i) => ({ id, stepOrder: i + 1 }));

describe("checkOrderKeepsCheckpoints", () => {
  const plan = [
    step("a", 1, "completed"),
    step("cp", 2, "pending", true),
    step("b", 3, "failed"),
    step("c", 4, "pending"),
  ];

  it("refuses moving a step from behind an undecided checkpoint ahead of it, whatever its status", () => {
    // The fail -> reorder -> retry: the failed step would come back ahead of the checkpoint.
    expect(() => checkOrderKeepsCheckpoints(plan, orders(["a", "b", "cp", "c"]))).toThrow(
      /step 3, which comes after it, cannot be moved ahead/,
    );
    expect(() => checkOrderKeepsCheckpoints(plan, orders(["a", "c", "b", "cp"]))).toThrow(
      /FORBIDDEN|cannot be moved/,
    );
  });

  it("lets steps on one side change places, and steps before it move behind it", () => {
    expect(() => checkOrderKeepsCheckpoints(plan, orders(["a", "cp", "c", "b"]))).not.toThrow();
    expect(() => checkOrderKeepsCheckpoints(plan, orders(["cp", "a", "b", "c"]))).not.toThrow();
  });

  it("does not hold anything behind a decided checkpoint", () => {
    const decided = plan.map((s) => (s.id === "cp" ? { ...s, status: "completed" as const } : s));
    expect(() => checkOrderKeepsCheckpoints(decided, orders(["b", "c", "a", "cp"]))).not.toThrow();
  });

  it("is what decideModify applies to reorder_steps, on every team", () => {
    expect(() =>
      decideModify({ id: "p", status: "executing", awaitingSteps: null }, plan, {
        action: "reorder_steps",
        modificationRationale: "faster",
        stepIds: ["a", "b", "cp", "c"],
      }),
    ).toThrow(/cannot be moved ahead/);
  });

  it("agrees with the rule stated pairwise, on random plans and orders", () => {
    const planArb = fc
      .array(
        fc.record({
          status: fc.constantFrom(...STEP_STATUSES),
          checkpoint: fc.boolean(),
        }),
        { minLength: 1, maxLength: 8 },
      )
      .chain((steps) =>
        fc.tuple(
          fc.constant(steps.map((s, i) => step(`s${i}`, i + 1, s.status, s.checkpoint))),
          fc.shuffledSubarray(
            steps.map((_, i) => `s${i}`),
            { minLength: steps.length, maxLength: steps.length },
          ),
        ),
      );
    fc.assert(
      fc.property(planArb, ([before, newOrder]) => {
        const at = new Map(newOrder.map((id, i) => [id, i + 1]));
        const undecided = (s: (typeof before)[number]) =>
          s.stepType === "checkpoint" &&
          (UNDECIDED_CHECKPOINT_STATUSES as readonly string[]).includes(s.status);
        const broken = before.some((cp) =>
          before.some(
            (s) =>
              undecided(cp) &&
              s.stepOrder > cp.stepOrder &&
              (at.get(s.id) ?? 0) < (at.get(cp.id) ?? 0),
          ),
        );
        const refused = (() => {
          try {
            checkOrderKeepsCheckpoints(before, orders(newOrder));
            return false;
          } catch {
            return true;
          }
        })();
        expect(refused).toBe(broken);
      }),
      { seed: 39, numRuns: 500 },
    );
  });
});

describe("checkPlanTakesWork", () => {
  const steps = [step("a", 1, "completed"), step("cp", 2, "awaiting_input", true)];

  it("refuses a deliverable while a checkpoint waits, and anything on a failed or cancelled plan", () => {
    expect(() =>
      checkPlanTakesWork({ id: "p", status: "awaiting_review", steps }, "deliverable"),
    ).toThrow(/checkpoint nobody has decided yet, so the plan takes no deliverable/);
    for (const status of ["failed", "cancelled"] as const) {
      for (const work of ["deliverable", "evidence", "artifact"] as const) {
        expect(() => checkPlanTakesWork({ id: "p", status, steps: [] }, work)).toThrow(
          new RegExp(`is ${status}`),
        );
      }
    }
  });

  it("refuses evidence and artifacts for a held step, and takes them before it", () => {
    const plan = {
      id: "p",
      status: "executing" as const,
      steps: [...steps, step("b", 3, "completed")],
    };
    expect(() => checkPlanTakesWork(plan, "evidence", { stepOrder: 3 })).toThrow(
      /take no evidence/,
    );
    expect(() => checkPlanTakesWork(plan, "artifact", { stepOrder: 3 })).toThrow(/no research/);
    expect(() => checkPlanTakesWork(plan, "evidence", { stepOrder: 1 })).not.toThrow();
    expect(() => checkPlanTakesWork(plan, "artifact")).not.toThrow();
  });

  it("takes a deliverable on a completed plan whose checkpoints were decided", () => {
    const done = [step("a", 1, "completed"), step("cp", 2, "skipped", true)];
    expect(() =>
      checkPlanTakesWork({ id: "p", status: "completed", steps: done }, "deliverable"),
    ).not.toThrow();
    expect(heldBy(done, 10)).toBeUndefined();
  });
});

describe("checkDecisionNotHeld", () => {
  it("refuses an approve or a modify behind an undecided checkpoint, lets a skip or a reject go, and holds nothing before it", () => {
    const reviewed = step("b", 2, "awaiting_input");
    const plan = { id: "p", steps: [step("cp", 1, "awaiting_input", true), reviewed] };
    for (const decision of REVIEW_DECISIONS) {
      const decide = () => checkDecisionNotHeld(plan, { stepOrder: 2 }, decision);
      if (decision === "approve" || decision === "modify") {
        expect(decide).toThrow(/take no approval and no feedback.*can be skipped or rejected now/);
      } else {
        expect(decide).not.toThrow();
      }
      // The checkpoint itself, and any step once it is decided, take every decision.
      expect(() => checkDecisionNotHeld(plan, { stepOrder: 1 }, decision)).not.toThrow();
      const decided = { id: "p", steps: [step("cp", 1, "completed", true), reviewed] };
      expect(() => checkDecisionNotHeld(decided, { stepOrder: 2 }, decision)).not.toThrow();
    }
  });
});

describe("approvalQuorum", () => {
  const review = { required: 2, digest: "d1", policy: "people_and_agents" as const };
  const by = (approverId: string, channel: Approval["channel"] = "web", digest = "d1") => ({
    approverId,
    label: approverId,
    channel,
    digest,
  });

  it("waits after one person's approval and passes on a second person's", () => {
    const first = approvalQuorum(review, [], by("ada"));
    expect(first).toMatchObject({ reached: false, repeat: false, counts: true });
    expect(first.counted.map((a) => a.approverId)).toEqual(["ada"]);
    const second = approvalQuorum(review, [by("ada")], by("bob"));
    expect(second.reached).toBe(true);
    expect(second.counted.map((a) => a.approverId)).toEqual(["ada", "bob"]);
  });

  it("counts one person once, whichever way they answer", () => {
    expect(approvalQuorum(review, [by("ada")], by("ada"))).toMatchObject({
      reached: false,
      repeat: true,
    });
    expect(approvalQuorum(review, [by("ada", "relayed")], by("ada", "client")).reached).toBe(false);
  });

  it("does not count an approval of content that has changed since", () => {
    const outcome = approvalQuorum(review, [by("ada", "web", "d0")], by("bob"));
    expect(outcome).toMatchObject({ reached: false, repeat: false });
    expect(outcome.counted.map((a) => a.approverId)).toEqual(["bob"]);
    // Ada approving the content as it is now counts again.
    expect(approvalQuorum(review, [by("ada", "web", "d0"), by("bob")], by("ada")).reached).toBe(
      true,
    );
  });

  it("counts no relayed approval under people_only", () => {
    const peopleOnly = { ...review, policy: "people_only" as const };
    expect(approvalQuorum(peopleOnly, [by("ada", "relayed")], by("bob")).reached).toBe(false);
    expect(approvalQuorum(peopleOnly, [by("ada")], by("bob", "relayed"))).toMatchObject({
      reached: false,
      counts: false,
    });
    expect(countedApprovals(peopleOnly, [by("ada", "relayed"), by("bob")])).toHaveLength(1);
  });

  it("lets a deadline's approve decide at once, counting it for nobody", () => {
    expect(approvalQuorum(review, [], by("cairn", "deadline"))).toMatchObject({
      reached: true,
      counts: false,
      counted: [],
    });
  });
});
