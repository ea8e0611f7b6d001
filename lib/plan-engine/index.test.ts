import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as engine from "./index";

const folder = fileURLToPath(new URL(".", import.meta.url));
const sources = readdirSync(folder).filter(
  (name) => name.endsWith(".ts") && !name.endsWith(".test.ts"),
);

describe("public surface", () => {
  it("exports the whole engine from index.ts", () => {
    for (const name of [
      "AppError",
      "PLAN_STATUSES",
      "STEP_STATUSES",
      "STEP_TYPES",
      "TERMINAL_STEP_STATUSES",
      "OPEN_STEP_STATUSES",
      "TERMINAL_PLAN_STATUSES",
      "AUDIT_EVENT_TYPES",
      "REVIEW_DECISIONS",
      "VALID_PLAN_TRANSITIONS",
      "VALID_STEP_TRANSITIONS",
      "canTransitionPlan",
      "canTransitionStep",
      "transitionPlan",
      "transitionStep",
      "derivePlanStatus",
      "isTerminalStepStatus",
      "isTerminalPlanStatus",
      "applyReviewDecision",
      "decideSubmit",
      "decideReviewDecision",
      "decidePlanStatusAfterModify",
      "completionEffects",
      "settledPlanStatus",
      "planStatusAfter",
      "appendUserFeedback",
      "resolvePath",
      "parseLiteral",
      "OPERATORS",
      "parseConditionExpression",
      "evaluateCondition",
      "buildConditionContext",
      "BRANCH_ACTIONS",
      "resolveBranchAction",
      "stepsToSkip",
      "evaluateBranching",
      "computeProgress",
      "isStepStalled",
      "stallWarnings",
    ]) {
      expect(engine, name).toHaveProperty(name);
    }
  });
});

// docs/architecture.md: the engine is pure. That it imports nothing outside
// its folder is held with the other layers' imports by
// lib/services/layers.test.ts, which reads the table of layers; what no import
// shows (a clock, I/O, eval) is checked here.
describe("purity", () => {
  it.each(sources)("%s has no eval, Function, clock or I/O", (name) => {
    const code = readFileSync(`${folder}/${name}`, "utf8")
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/\/\/.*$/gm, "");
    for (const banned of [
      /\beval\s*\(/,
      /\bnew\s+Function\b/,
      /\bFunction\s*\(/,
      /\bDate\.now\b/,
      /\bnew\s+Date\s*\(\s*\)/,
      /\bprocess\./,
      /\brequire\s*\(/,
      /\bimport\s*\(/,
    ]) {
      expect(code, `${name}: ${banned}`).not.toMatch(banned);
    }
  });

  it("uses kebab-case file names", () => {
    for (const name of readdirSync(folder))
      expect(name).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z]+)+$/);
  });
});
