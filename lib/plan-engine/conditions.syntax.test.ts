import { describe, expect, it } from "vitest";
import { context } from "@/tests/support/condition-context";
import {
  buildConditionContext,
  conditionPathProblem,
  evaluateCondition,
  MAX_CONDITION_EXPRESSION_LENGTH,
  numericString,
  parseConditionExpression,
  parseLiteral,
} from "./conditions";

describe("parseLiteral", () => {
  it.each<[string, unknown]>([
    ["true", true],
    ["false", false],
    ["null", null],
    ['"completed"', "completed"],
    ["'completed'", "completed"],
    ['""', ""],
    ["''", ""],
    ['"true"', "true"],
    ['"42"', "42"],
    ['"a b"', "a b"],
    ["0.8", 0.8],
    ["80", 80],
    ["0", 0],
    ["-3", -3],
    ["-0.25", -0.25],
    ["1e3", 1000],
    ["2.5E-2", 0.025],
    ["  42  ", 42],
    ["  true ", true],
    ["completed", "completed"],
    ["0x10", "0x10"],
    ["", ""],
    ["   ", ""],
    [".5", ".5"],
    ["5.", "5."],
    ["+5", "+5"],
    ["1_000", "1_000"],
    ["Infinity", "Infinity"],
    ["NaN", "NaN"],
    ["1e999", "1e999"],
    ["True", "True"],
    ["undefined", "undefined"],
    ['"unterminated', '"unterminated'],
    ["'mixed\"", "'mixed\""],
    ['"', '"'],
  ])("%j -> %j", (raw, expected) => {
    expect(parseLiteral(raw)).toStrictEqual(expected);
  });
});

describe("numericString", () => {
  it.each<[string, number]>([
    ["90", 90],
    ["0", 0],
    ["-1.5", -1.5],
    ["1e3", 1000],
    ["2.5E-2", 0.025],
    ["007", 7],
    ["  90  ", 90],
    ["\t90\n", 90],
  ])("%j -> %j", (raw, expected) => {
    expect(numericString(raw)).toBe(expected);
  });

  it.each([
    "",
    " ",
    "0x10",
    "90abc",
    "abc90",
    "9 0",
    "+5",
    ".5",
    "5.",
    "-.5",
    "1_000",
    "1,5",
    "Infinity",
    "-Infinity",
    "NaN",
    "1e999",
    "-1e999",
    "1e",
    "e3",
    "0b1",
    "90%",
    "\u0660",
  ])("%j is not a number", (raw) => {
    expect(numericString(raw)).toBeUndefined();
  });
});

describe("parseConditionExpression", () => {
  it("returns the parts of a valid expression", () => {
    expect(parseConditionExpression("result.metrics.accuracy > 0.9")).toEqual({
      ok: true,
      path: "result.metrics.accuracy",
      operator: ">",
      value: 0.9,
    });
    expect(parseConditionExpression("status !== 'failed'")).toEqual({
      ok: true,
      path: "status",
      operator: "!==",
      value: "failed",
    });
    expect(parseConditionExpression("result.items.0.ok === true")).toMatchObject({ ok: true });
    expect(parseConditionExpression("$x_1 === null")).toMatchObject({ ok: true, path: "$x_1" });
  });

  it.each<[string, string]>([
    ["confidence", "no comparison operator (expected one of ===, !==, >=, <=, >, <)"],
    ["confidence == 1", "use === or !== rather than == or !="],
    ["status != 'x'", "use === or !== rather than == or !="],
    ["a = 1", "no comparison operator"],
    ["", "expression is empty"],
    ["   ", "expression is empty"],
    ["=== 1", "left side is empty"],
    ["  > 0.5", "left side is empty"],
    ["result..x === 1", "left side 'result..x' is not a dot-path of identifiers"],
    [".a === 1", "left side '.a' is not a dot-path"],
    ["a. === 1", "left side 'a.' is not a dot-path"],
    ["0.a === 1", "left side '0.a' is not a dot-path"],
    ["a b === 1", "left side 'a b' is not a dot-path"],
    ["a[0] === 1", "left side 'a[0]' is not a dot-path"],
    ["f() === 1", "is not a dot-path"],
    ["a.b-c === 1", "is not a dot-path"],
    ["x === ", "right side is empty"],
    ["x >=", "right side is empty"],
    [
      "constructor === 1",
      "left side 'constructor' may not reference constructor/__proto__/prototype",
    ],
    ["result.__proto__ === 1", "may not reference constructor/__proto__/prototype"],
    ["result.prototype.x === 1", "may not reference constructor/__proto__/prototype"],
    ["score >= high", "right side 'high' of '>=' is not a number"],
    ["score > '80'", "of '>' is not a number"],
    ["score < .5", "right side '.5' is not a number Cairn reads; write 0.5"],
    ["result.n === .5", "right side '.5' is not a number Cairn reads; write 0.5"],
    ["result.n !== -.5", "right side '-.5' is not a number Cairn reads; write -0.5"],
    ["result.n === 5.", "right side '5.' is not a number Cairn reads; write 5 "],
    ["result.n === +5", "right side '+5' is not a number Cairn reads; write 5 "],
    ["result.n >= +.5e2", "write 0.5e2 "],
    ["result.n === 1e999", "right side '1e999' is out of range for a number"],
    ["result.n !== -1e999", "right side '-1e999' is out of range for a number"],
    ["score <= null", "of '<=' is not a number"],
    ["score > 1e999", "right side '1e999' is out of range for a number"],
  ])("%j: %s", (expression, reason) => {
    const parsed = parseConditionExpression(expression);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toContain(reason);
    expect(evaluateCondition(expression, context)).toBe(false);
  });

  it("never lets a refused .5 be true, and reads 0.5 and a quoted '.5'", () => {
    for (const n of [0.5, ".5", "0.5"]) {
      expect(evaluateCondition("result.n === .5", { result: { n } })).toBe(false);
    }
    expect(parseConditionExpression("result.n === 0.5")).toEqual({
      ok: true,
      path: "result.n",
      operator: "===",
      value: 0.5,
    });
    expect(evaluateCondition("result.n === 0.5", { result: { n: 0.5 } })).toBe(true);
    expect(evaluateCondition("result.n < 0.5", { result: { n: 0.25 } })).toBe(true);
    expect(evaluateCondition('result.n === ".5"', { result: { n: ".5" } })).toBe(true);
    expect(evaluateCondition("result.n === '+5'", { result: { n: "+5" } })).toBe(true);
  });

  it(`caps expressions at ${MAX_CONDITION_EXPRESSION_LENGTH} characters`, () => {
    const padding = " ".repeat(MAX_CONDITION_EXPRESSION_LENGTH - "confidence > 0.8".length);
    const atLimit = `confidence > 0.8${padding}`;
    expect(atLimit).toHaveLength(MAX_CONDITION_EXPRESSION_LENGTH);
    expect(parseConditionExpression(atLimit).ok).toBe(true);
    const over = parseConditionExpression(`${atLimit} `);
    expect(over).toEqual({
      ok: false,
      reason: "expression is 501 characters long; the limit is 500",
    });
    expect(evaluateCondition(`${atLimit} `, context)).toBe(false);
  });

  it("refuses a value that is not a string", () => {
    expect(parseConditionExpression(42 as unknown as string)).toEqual({
      ok: false,
      reason: "expression must be a string",
    });
    expect(evaluateCondition(null as unknown as string, context)).toBe(false);
  });
});

describe("conditionPathProblem", () => {
  it("accepts the paths the built context resolves", () => {
    for (const path of ["confidence", "status", "result", "result.score", "result.a.b"]) {
      expect(conditionPathProblem(path)).toBeUndefined();
    }
  });

  it("refuses a path outside the context, suggesting it under result", () => {
    expect(conditionPathProblem("score")).toMatchObject({ suggestion: "result.score" });
    expect(conditionPathProblem("metrics.accuracy")).toMatchObject({
      suggestion: "result.metrics.accuracy",
    });
  });

  it("refuses a path inside confidence or status, which hold plain values", () => {
    expect(conditionPathProblem("confidence.value")).toMatchObject({ suggestion: "confidence" });
  });

  it("agrees with evaluation: a refused path never resolves in a built context", () => {
    const built = buildConditionContext({ confidence: 0.9, result: { score: 95 } });
    expect(evaluateCondition("score >= 80", built)).toBe(false);
    expect(evaluateCondition("result.score >= 80", built)).toBe(true);
  });
});
