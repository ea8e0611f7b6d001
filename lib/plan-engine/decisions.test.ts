import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AppError } from "./app-error";
import { checkCheckpointPass } from "./checkpoint-guard";
import { buildConditionContext, evaluateCondition } from "./conditions";
import {
  answersAsPersonInClient,
  appendUserFeedback,
  applyReviewDecision,
  approvedResult,
  checkDecider,
  checkTimeoutAction,
  type DeciderKind,
  decisionChannel,
  splitUserFeedback,
} from "./decisions";
import { TIMEOUT_ACTIONS } from "./review-deadlines";
import { DECISION_POLICIES, REVIEW_DECISIONS } from "./states";
import { canTransitionPlan, canTransitionStep } from "./transitions";

describe("applyReviewDecision", () => {
  it.each([
    ["approve", "completed", "executing"],
    ["reject", "failed", "failed"],
    ["modify", "in_progress", "executing"],
    ["skip", "skipped", "executing"],
  ] as const)("%s -> step %s, plan %s", (decision, stepStatus, planStatus) => {
    expect(applyReviewDecision(decision)).toEqual({ stepStatus, planStatus });
  });

  it("only ever proposes moves the state machines allow", () => {
    for (const decision of REVIEW_DECISIONS) {
      const { stepStatus, planStatus } = applyReviewDecision(decision);
      expect(canTransitionStep("awaiting_input", stepStatus)).toBe(true);
      expect(canTransitionPlan("awaiting_review", planStatus)).toBe(true);
    }
  });
});

describe("appendUserFeedback", () => {
  it("appends the feedback after a horizontal rule and a User feedback: prefix", () => {
    expect(appendUserFeedback("Search for X.", "Also cover Y.")).toBe(
      "Search for X.\n\n---\n\nUser feedback: Also cover Y.",
    );
  });

  it("stacks repeated feedback in order", () => {
    const once = appendUserFeedback("Do X.", "first");
    expect(appendUserFeedback(once, "second")).toBe(
      "Do X.\n\n---\n\nUser feedback: first\n\n---\n\nUser feedback: second",
    );
  });
});

describe("splitUserFeedback", () => {
  it("gives back the original instructions and each feedback in order", () => {
    const twice = appendUserFeedback(appendUserFeedback("Do X.", "first"), "second");
    expect(splitUserFeedback(twice)).toEqual({ original: "Do X.", feedback: ["first", "second"] });
  });

  it("reads instructions without feedback as the original alone", () => {
    expect(splitUserFeedback("Do X.")).toEqual({ original: "Do X.", feedback: [] });
  });
});

describe("who may decide", () => {
  const kinds: DeciderKind[] = ["user", "api_key", "oauth_app", "system"];
  const url = "http://127.0.0.1:3000/plans/p#review";

  it("refuses exactly an agent's decision where only people decide, naming the review page", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...DECISION_POLICIES),
        fc.constantFrom(...kinds),
        (policy, kind) => {
          const refused = (() => {
            try {
              checkDecider(policy, kind, url);
              return undefined;
            } catch (error) {
              return error as AppError;
            }
          })();
          const agent = kind === "api_key" || kind === "oauth_app";
          expect(refused !== undefined).toBe(policy === "people_only" && agent);
          if (refused) {
            expect(refused.code).toBe("FORBIDDEN");
            expect(refused.message).toContain(url);
          }
        },
      ),
    );
  });

  it("names the channel of each kind of decider", () => {
    expect(kinds.map((kind) => decisionChannel(kind))).toEqual([
      "web",
      "relayed",
      "relayed",
      "deadline",
    ]);
    // A person answering a form in their own MCP client; only a person can.
    expect(kinds.map((kind) => decisionChannel(kind, true))).toEqual([
      "client",
      "relayed",
      "relayed",
      "deadline",
    ]);
  });

  it("refuses an agent's deadline approve or skip where only people decide, nothing else", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...DECISION_POLICIES),
        fc.constantFrom(...kinds),
        fc.constantFrom(undefined, ...TIMEOUT_ACTIONS),
        fc.boolean(),
        (policy, kind, onTimeout, inheritedFromTeam) => {
          const call = () => checkTimeoutAction(policy, kind, { onTimeout, inheritedFromTeam });
          const refuse =
            policy === "people_only" &&
            (kind === "api_key" || kind === "oauth_app") &&
            (onTimeout === "approve" || onTimeout === "skip");
          if (refuse) {
            // The team's action inherited by an agent's deadline is refused as
            // its own would be, and the message says it is the team's.
            expect(call).toThrow(inheritedFromTeam ? /team's default/ : /cannot set a deadline/);
          } else expect(call).not.toThrow();
        },
      ),
    );
  });

  it("counts an in-client answer as a person's only on a connected app the team trusts", () => {
    const app = { kind: "oauth_app" as const, clientId: "https://chat.example/client.json" };
    for (const decisionPolicy of DECISION_POLICIES) {
      const rules = (trustedClients: string[] | null) => ({ decisionPolicy, trustedClients });
      expect(answersAsPersonInClient(app, rules([app.clientId, "other"]))).toBe(true);
      expect(answersAsPersonInClient(app, rules(["other"]))).toBe(false);
      expect(answersAsPersonInClient(app, rules([]))).toBe(false);
      // A key proves no person, whatever the team trusts.
      for (const kind of ["api_key", "system", "user"] as const) {
        expect(answersAsPersonInClient({ kind, clientId: app.clientId }, rules(null))).toBe(false);
        expect(
          answersAsPersonInClient({ kind, clientId: app.clientId }, rules([app.clientId])),
        ).toBe(false);
      }
      expect(answersAsPersonInClient({ kind: "oauth_app" }, rules(null))).toBe(false);
    }
    // No list: every connected app where agents may relay, none where only people decide.
    const unnamed = { trustedClients: null };
    expect(answersAsPersonInClient(app, { decisionPolicy: "people_and_agents", ...unnamed })).toBe(
      true,
    );
    expect(answersAsPersonInClient(app, { decisionPolicy: "people_only", ...unnamed })).toBe(false);
  });

  it("lets only a person past a checkpoint step where only people decide", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...DECISION_POLICIES),
        fc.constantFrom(...kinds),
        fc.constantFrom("checkpoint", "search", "analyze"),
        fc.constantFrom("result" as const, "remove_step" as const, "fail_step" as const),
        (policy, kind, stepType, how) => {
          const call = () => checkCheckpointPass(policy, kind, { stepOrder: 2, stepType }, how);
          const refuse =
            policy === "people_only" &&
            (kind === "api_key" || kind === "oauth_app") &&
            stepType === "checkpoint";
          if (refuse) expect(call).toThrow(/Step 2 is a checkpoint.*request_user_review/);
          else expect(call).not.toThrow();
        },
      ),
    );
  });
});

describe("approvedResult", () => {
  it("is the proposal when there is one, else a record of the decision without a confidence", () => {
    fc.assert(
      fc.property(
        fc.option(fc.dictionary(fc.string(), fc.jsonValue()), { nil: null }),
        fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
        fc.option(fc.string({ minLength: 1 }), { nil: null }),
        (result, confidence, feedback) => {
          const approved = approvedResult({ result, confidence }, "r1", feedback);
          expect(approved.confidence).toBe(confidence);
          if (result !== null) expect(approved.result).toBe(result);
          else
            expect(approved.result).toEqual({
              approvedByReview: "r1",
              ...(feedback ? { feedback } : {}),
            });
        },
      ),
    );
  });

  it("never lets a confidence condition fire on an approve that reported none", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("<", "<=", ">", ">=", "===", "!=="),
        fc.integer({ min: -100, max: 200 }).map((n) => n / 100),
        (op, threshold) => {
          const approved = approvedResult({ result: null, confidence: null }, "r1", null);
          const context = buildConditionContext({ ...approved, missingConfidence: "absent" });
          expect(evaluateCondition(`confidence ${op} ${threshold}`, context)).toBe(false);
        },
      ),
    );
  });
});
