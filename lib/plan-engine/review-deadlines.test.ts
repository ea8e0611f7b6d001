import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decideTimeout,
  dueSoonAt,
  MAX_DEADLINE_SECONDS,
  resolveDeadline,
  timeoutActionInForce,
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
    expect(decideTimeout("escalate", NOW)).toMatchObject({ kind: "escalate" });
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
