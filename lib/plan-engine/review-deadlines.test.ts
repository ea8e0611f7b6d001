import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkEscalationChain,
  decideTimeout,
  dueSoonAt,
  type EscalationLevel,
  escalationDueAt,
  MAX_DEADLINE_SECONDS,
  MAX_LEVEL_SECONDS,
  MIN_LEVEL_SECONDS,
  nextEscalation,
  resolveDeadline,
  type TimeoutAction,
  TO_ADMINS,
  timeoutActionInForce,
  timeoutActionNotHeld,
} from "./review-deadlines";

const NOW = Date.parse("2026-05-01T12:00:00Z");
const NO_TEAM = { reviewDeadlineSeconds: null, reviewOnTimeout: null };

describe("resolveDeadline", () => {
  it("waits for ever without a deadline of its own or the team's", () => {
    expect(resolveDeadline({}, NO_TEAM, NOW)).toBeNull();
  });

  it("takes the request's relative or absolute deadline with its action", () => {
    expect(resolveDeadline({ deadlineSeconds: 30, onTimeout: "skip" }, NO_TEAM, NOW)).toEqual({
      dueAt: NOW + 30_000,
      onTimeout: "skip",
    });
    const at = NOW + 3_600_000;
    expect(resolveDeadline({ deadlineAt: at, onTimeout: "escalate" }, NO_TEAM, NOW)).toEqual({
      dueAt: at,
      onTimeout: "escalate",
    });
  });

  it("falls back to the team's default, and the team's action for a bare deadline", () => {
    const team = { reviewDeadlineSeconds: 600, reviewOnTimeout: "approve" as const };
    expect(resolveDeadline({}, team, NOW)).toEqual({ dueAt: NOW + 600_000, onTimeout: "approve" });
    expect(resolveDeadline({ deadlineSeconds: 5 }, team, NOW)).toEqual({
      dueAt: NOW + 5_000,
      onTimeout: "approve",
    });
  });

  it.each([
    [{ deadlineSeconds: 5 }, "onTimeout"],
    [{ onTimeout: "skip" as const }, "onTimeout"],
    [{ deadlineSeconds: 5, deadlineAt: NOW + 1, onTimeout: "skip" as const }, "deadlineAt"],
    [{ deadlineAt: NOW - 1, onTimeout: "skip" as const }, "deadlineAt"],
    [
      { deadlineAt: NOW + (MAX_DEADLINE_SECONDS + 1) * 1000, onTimeout: "skip" as const },
      "deadlineAt",
    ],
  ])("rejects %o naming %s", (request, field) => {
    expect(() => resolveDeadline(request, NO_TEAM, NOW)).toThrow(
      expect.objectContaining({ code: "VALIDATION_ERROR", metadata: { field } }),
    );
  });
});

describe("dueSoonAt", () => {
  it("is 5 minutes ahead of a long deadline and at 80% of a short one", () => {
    expect(dueSoonAt(NOW, NOW + 86_400_000)).toBe(NOW + 86_400_000 - 300_000);
    expect(dueSoonAt(NOW, NOW + 30_000)).toBe(NOW + 24_000);
  });

  it("always lies within the review's time, at most 5 minutes ahead of the deadline", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_DEADLINE_SECONDS * 1000 }), (span) => {
        const soon = dueSoonAt(NOW, NOW + span);
        expect(soon).toBeGreaterThan(NOW);
        expect(soon).toBeLessThan(NOW + span);
        expect(NOW + span - soon).toBeLessThanOrEqual(300_000);
      }),
    );
  });
});

describe("decideTimeout", () => {
  it.each(["approve", "reject", "skip"] as const)(
    "decides %s with feedback naming the deadline",
    (action) => {
      const outcome = decideTimeout(action, NOW);
      expect(outcome).toMatchObject({ kind: "decide", decision: action });
      if (outcome.kind === "decide") {
        expect(outcome.feedback).toContain("2026-05-01T12:00:00.000Z");
        expect(outcome.feedback).toContain(`onTimeout: ${action}`);
      }
    },
  );

  it("escalates without a decision", () => {
    expect(decideTimeout("escalate", NOW)).toMatchObject({ kind: "escalate", to: TO_ADMINS });
  });
});

describe("timeoutActionNotHeld", () => {
  // A checkpoint nobody has decided, added at order 2 ahead of the reviewed step.
  const held = {
    stepOrder: 3,
    checkpoints: [{ stepOrder: 2, stepType: "checkpoint", status: "pending" as const }],
  };
  const own = (onTimeout: TimeoutAction) => ({ onTimeout, replaced: null });

  it("turns an approve the checkpoint rule refuses into escalate, with why; skip, reject and escalate stay", () => {
    expect(timeoutActionNotHeld(own("approve"), held)).toEqual({
      onTimeout: "escalate",
      replaced: {
        from: "approve",
        reason: expect.stringMatching(
          /^The deadline's "approve" cannot go: step 2, a checkpoint nobody has decided yet, now stands before this step/,
        ),
      },
    });
    for (const action of ["skip", "reject", "escalate"] as const) {
      expect(timeoutActionNotHeld(own(action), held)).toEqual(own(action));
    }
  });

  it("keeps an approve before the checkpoint, or once it is decided", () => {
    expect(timeoutActionNotHeld(own("approve"), { ...held, stepOrder: 1 })).toEqual(own("approve"));
    const decided = {
      ...held,
      checkpoints: held.checkpoints.map((c) => ({ ...c, status: "completed" as const })),
    };
    expect(timeoutActionNotHeld(own("approve"), decided)).toEqual(own("approve"));
  });
});

describe("timeoutActionInForce", () => {
  const agents = { requestedBy: "api_key" as const, fromTeam: false };

  it("replaces an agent's approve or skip where only people decide: the team's own rule if it leaves the step to a person, else escalate", () => {
    expect(
      timeoutActionInForce("people_only", { ...agents, onTimeout: "approve" }, "reject"),
    ).toEqual({
      onTimeout: "reject",
      replaced: {
        from: "approve",
        reason: expect.stringContaining("the team's own action when it passes, reject"),
      },
    });
    for (const team of ["approve", "skip", null] as const) {
      expect(
        timeoutActionInForce("people_only", { ...agents, onTimeout: "skip" }, team),
      ).toMatchObject({
        onTimeout: "escalate",
        replaced: {
          from: "skip",
          reason: expect.stringContaining("hands the review to the admins"),
        },
      });
    }
  });

  it("keeps what the policy allows: people_and_agents, reject and escalate, a person's request, the team's whole default", () => {
    const kept = (onTimeout: "approve" | "reject" | "escalate" | "skip") => ({
      onTimeout,
      replaced: null,
    });
    expect(
      timeoutActionInForce("people_and_agents", { ...agents, onTimeout: "approve" }, null),
    ).toEqual(kept("approve"));
    expect(timeoutActionInForce("people_only", { ...agents, onTimeout: "reject" }, null)).toEqual(
      kept("reject"),
    );
    expect(timeoutActionInForce("people_only", { ...agents, onTimeout: "escalate" }, null)).toEqual(
      kept("escalate"),
    );
    expect(
      timeoutActionInForce(
        "people_only",
        { requestedBy: "user", fromTeam: false, onTimeout: "skip" },
        null,
      ),
    ).toEqual(kept("skip"));
    expect(
      timeoutActionInForce(
        "people_only",
        { requestedBy: "oauth_app", fromTeam: true, onTimeout: "approve" },
        "approve",
      ),
    ).toEqual(kept("approve"));
  });
});

const ADA = "00000000-0000-4000-8000-00000000000a";
const BOB = "00000000-0000-4000-8000-00000000000b";
const level = (
  afterSeconds: number,
  from: EscalationLevel["from"],
  to: EscalationLevel["to"] = TO_ADMINS,
): EscalationLevel => ({ afterSeconds, from, to });

describe("checkEscalationChain", () => {
  it("accepts 1 to 5 levels of 1 minute to 30 days, to the admins or named people", () => {
    expect(() =>
      checkEscalationChain([
        level(MIN_LEVEL_SECONDS, "request", { kind: "people", userIds: [ADA] }),
        level(MAX_LEVEL_SECONDS, "previous", { kind: "people", userIds: [ADA, BOB] }),
        level(600, "previous"),
      ]),
    ).not.toThrow();
  });

  it.each([
    ["no level", [], "levels"],
    ["six levels", Array.from({ length: 6 }, () => level(60, "previous")), "levels"],
    ["under a minute", [level(59, "request")], "levels.0"],
    ["over 30 days", [level(60, "request"), level(MAX_LEVEL_SECONDS + 1, "previous")], "levels.1"],
    ["a fraction of a second", [level(60.5, "request")], "levels.0"],
    ["nobody named", [level(60, "request", { kind: "people", userIds: [] })], "levels.0"],
    ["a person twice", [level(60, "request", { kind: "people", userIds: [ADA, ADA] })], "levels.0"],
  ])("refuses %s, naming %s", (_name, levels, field) => {
    expect(() => checkEscalationChain(levels as EscalationLevel[])).toThrow(
      expect.objectContaining({ code: "VALIDATION_ERROR", metadata: { field } }),
    );
  });
});

describe("nextEscalation", () => {
  const chain = [level(600, "request"), level(300, "previous"), level(60, "request")];

  it("walks the levels in order: the first after the request, then each from its base", () => {
    const first = nextEscalation(chain, 0, NOW, NOW);
    expect(first).toEqual({ level: 1, dueAt: NOW + 600_000 });
    const second = nextEscalation(chain, 1, NOW, first?.dueAt ?? 0);
    expect(second).toEqual({ level: 2, dueAt: NOW + 900_000 });
    // Counted from the request it would come before level 2: it comes right after it instead.
    expect(nextEscalation(chain, 2, NOW, second?.dueAt ?? 0)).toEqual({
      level: 3,
      dueAt: NOW + 900_000,
    });
    expect(nextEscalation(chain, 3, NOW, NOW + 900_000)).toBeNull();
  });

  it("counts a first level from the request whatever it says", () => {
    expect(escalationDueAt([level(120, "previous")], 0, NOW, NOW + 999_000)).toBe(NOW + 120_000);
  });

  it("never makes a level due before the one before it, nor before the request", () => {
    const levelArb = fc.record({
      afterSeconds: fc.integer({ min: MIN_LEVEL_SECONDS, max: MAX_LEVEL_SECONDS }),
      from: fc.constantFrom("request" as const, "previous" as const),
      to: fc.constant(TO_ADMINS),
    });
    fc.assert(
      fc.property(fc.array(levelArb, { minLength: 1, maxLength: 5 }), (levels) => {
        checkEscalationChain(levels);
        let applied = 0;
        let last = NOW;
        for (;;) {
          const next = nextEscalation(levels, applied, NOW, last);
          if (!next) break;
          expect(next.level).toBe(applied + 1);
          expect(next.dueAt).toBeGreaterThan(NOW);
          expect(next.dueAt).toBeGreaterThanOrEqual(last);
          applied = next.level;
          last = next.dueAt;
        }
        expect(applied).toBe(levels.length);
      }),
    );
  });
});
