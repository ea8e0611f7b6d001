import { describe, expect, it } from "vitest";
import { context } from "@/tests/support/condition-context";
import {
  buildConditionContext,
  COMPARISON_OPERATORS,
  type ConditionContext,
  evaluateCondition,
  OPERATORS,
  parseConditionExpression,
  resolvePath,
} from "./conditions";

describe("resolvePath", () => {
  it("walks dot-paths through own properties", () => {
    expect(resolvePath(context, "confidence")).toBe(0.85);
    expect(resolvePath(context, "result.hasData")).toBe(true);
    expect(resolvePath(context, "result.metrics.accuracy")).toBe(0.95);
    expect(resolvePath(context, "result.empty")).toBeNull();
    expect(resolvePath(context, "result.items.1.score")).toBe(7);
  });

  it("returns undefined for a missing segment or a primitive on the way", () => {
    expect(resolvePath(context, "missing")).toBeUndefined();
    expect(resolvePath(context, "result.metrics.f1")).toBeUndefined();
    expect(resolvePath(context, "result.empty.x")).toBeUndefined();
    expect(resolvePath(context, "status.length")).toBeUndefined();
    expect(resolvePath(context, "confidence.toFixed")).toBeUndefined();
    expect(resolvePath(context, "result.items.9")).toBeUndefined();
    expect(resolvePath(context, "")).toBeUndefined();
    expect(resolvePath(context, "result..hasData")).toBeUndefined();
    expect(resolvePath(null, "a")).toBeUndefined();
    expect(resolvePath("text", "length")).toBeUndefined();
  });

  it("never reaches the prototype chain", () => {
    for (const path of [
      "constructor",
      "__proto__",
      "prototype",
      "toString",
      "hasOwnProperty",
      "valueOf",
      "result.constructor",
      "result.constructor.name",
      "result.__proto__",
      "result.items.map",
      "result.items.constructor",
    ]) {
      expect(resolvePath(context, path)).toBeUndefined();
    }
  });

  it("refuses the forbidden names even as own properties", () => {
    const own = JSON.parse('{"__proto__": {"x": 1}, "constructor": 2, "prototype": 3}') as object;
    expect(Object.hasOwn(own, "__proto__")).toBe(true);
    expect(resolvePath(own, "__proto__.x")).toBeUndefined();
    expect(resolvePath(own, "constructor")).toBeUndefined();
    expect(resolvePath(own, "prototype")).toBeUndefined();
  });

  it("works on objects without a prototype", () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: { b: 1 } });
    expect(resolvePath(bare, "a.b")).toBe(1);
    expect(resolvePath(bare, "toString")).toBeUndefined();
  });
});

describe("OPERATORS", () => {
  it("is scanned in the spec's order", () => {
    expect(OPERATORS.map((operator) => operator.op)).toEqual([...COMPARISON_OPERATORS]);
    expect(COMPARISON_OPERATORS).toEqual(["===", "!==", ">=", "<=", ">", "<"]);
  });

  const table = Object.fromEntries(OPERATORS.map((o) => [o.op, o.evaluate]));

  it.each<[string, unknown, string | number | boolean | null, boolean]>([
    ["===", 1, 1, true],
    ["===", 1, "1", false],
    ["===", "a", "a", true],
    ["===", true, true, true],
    ["===", null, null, true],
    ["===", 0, false, false],
    ["===", { a: 1 }, "[object Object]", false],
    ["!==", 1, "1", true],
    ["!==", "a", "a", false],
    ["!==", null, null, false],
    [">=", 2, 2, true],
    [">=", 1, 2, false],
    ["<=", 2, 2, true],
    ["<=", 3, 2, false],
    [">", 3, 2, true],
    [">", 2, 2, false],
    ["<", 1, 2, true],
    ["<", 2, 2, false],
    [">", "3", 2, true],
    [">", 3, "2", true],
    [">", "3", "2", false],
    [">=", " 90 ", 90, true],
    ["<", "90abc", 100, false],
    [">", true, 0, false],
    [">", null, -1, false],
    ["<", Number.NaN, 1, false],
    ["<", Number.NEGATIVE_INFINITY, 1, false],
    [">", [5], 1, false],
  ])("%s: %j vs %j -> %s", (op, left, right, expected) => {
    expect(table[op]?.(left, right)).toBe(expected);
  });

  it("is false for an undefined left side under every operator", () => {
    for (const { evaluate } of OPERATORS) {
      for (const right of [1, "x", true, false, null, 0, ""]) {
        expect(evaluate(undefined, right)).toBe(false);
      }
    }
  });
});

describe("evaluateCondition: the spec's examples", () => {
  const ctx = (overrides: Record<string, unknown>): ConditionContext => ({
    ...context,
    ...overrides,
  });

  it.each<[string, ConditionContext, ConditionContext]>([
    ["confidence > 0.8", ctx({ confidence: 0.9 }), ctx({ confidence: 0.8 })],
    [
      "result.hasData === true",
      ctx({ result: { hasData: true } }),
      ctx({ result: { hasData: "true" } }),
    ],
    ['status === "completed"', ctx({ status: "completed" }), ctx({ status: "failed" })],
    [
      "result.metrics.accuracy > 0.9",
      ctx({ result: { metrics: { accuracy: 0.91 } } }),
      ctx({ result: { metrics: { accuracy: 0.9 } } }),
    ],
    ['status !== "failed"', ctx({ status: "completed" }), ctx({ status: "failed" })],
    ["score >= 80", ctx({ score: 80 }), ctx({ score: 79.99 })],
  ])("%s", (expression, whenTrue, whenFalse) => {
    expect(parseConditionExpression(expression).ok).toBe(true);
    expect(evaluateCondition(expression, whenTrue)).toBe(true);
    expect(evaluateCondition(expression, whenFalse)).toBe(false);
  });

  it("runs against the context submit_step_result builds", () => {
    const built = buildConditionContext({ confidence: 0.92, result: { hasData: true } });
    expect(evaluateCondition('status === "completed"', built)).toBe(true);
    expect(evaluateCondition("confidence > 0.8", built)).toBe(true);
    expect(evaluateCondition("result.hasData === true", built)).toBe(true);
    expect(evaluateCondition("result.missing === true", built)).toBe(false);
  });
});

describe("evaluateCondition: grammar details", () => {
  it("reads >= and <= before > and <", () => {
    expect(parseConditionExpression("a >= 1")).toEqual({
      ok: true,
      path: "a",
      operator: ">=",
      value: 1,
    });
    expect(parseConditionExpression("a <= 1")).toEqual({
      ok: true,
      path: "a",
      operator: "<=",
      value: 1,
    });
    expect(parseConditionExpression("a>=1")).toMatchObject({ operator: ">=" });
    expect(evaluateCondition("score >= 80", { score: 80 })).toBe(true);
    expect(evaluateCondition("score <= 80", { score: 80 })).toBe(true);
    expect(evaluateCondition("score > 80", { score: 80 })).toBe(false);
    expect(evaluateCondition("score < 80", { score: 80 })).toBe(false);
  });

  it("reads === and !== before the ordering operators", () => {
    expect(parseConditionExpression('a === ">="')).toEqual({
      ok: true,
      path: "a",
      operator: "===",
      value: ">=",
    });
    expect(evaluateCondition('a !== "<"', { a: "<" })).toBe(false);
  });

  it("splits at the first operator in table order, like the spec's indexOf scan", () => {
    // `===` is found before `>`, so the left side is `a > "b"`, which is not a path.
    expect(parseConditionExpression('a > "b" === c').ok).toBe(false);
    // The right side of === may contain anything; it becomes a raw string.
    expect(parseConditionExpression("a === b === c")).toMatchObject({
      path: "a",
      value: "b === c",
    });
  });

  it("compares strictly by type", () => {
    expect(evaluateCondition("result.label === 80", context)).toBe(false);
    expect(evaluateCondition('result.label === "80"', context)).toBe(true);
    expect(evaluateCondition('score === "80"', context)).toBe(false);
    expect(evaluateCondition("score === 80", context)).toBe(true);
    expect(evaluateCondition("result.empty === null", context)).toBe(true);
    expect(evaluateCondition("result.empty !== null", context)).toBe(false);
    expect(evaluateCondition("result.hasData !== false", context)).toBe(true);
  });

  it("compares an unquoted word as a raw string", () => {
    expect(evaluateCondition("status === completed", context)).toBe(true);
  });

  it("reads a numeric string as a number under ordering operators", () => {
    const scored = (score: unknown): ConditionContext => ({ result: { score } });
    expect(evaluateCondition("result.score >= 80", scored("90"))).toBe(true);
    expect(evaluateCondition("result.score >= 80", scored("80"))).toBe(true);
    expect(evaluateCondition("result.score >= 80", scored("79.5"))).toBe(false);
    expect(evaluateCondition("result.score > 80", scored(" 90 "))).toBe(true);
    expect(evaluateCondition("result.score < 0", scored("-1.5"))).toBe(true);
    expect(evaluateCondition("result.score <= 1000", scored("1e3"))).toBe(true);
    expect(evaluateCondition("result.score < 1000", scored("1e3"))).toBe(false);
    for (const text of ["", " ", "0x10", "90abc", "Infinity", "NaN", "+90", ".5", "1e999"]) {
      for (const op of [">=", "<=", ">", "<"]) {
        expect(evaluateCondition(`result.score ${op} 0`, scored(text)), `${text} ${op}`).toBe(
          false,
        );
      }
    }
  });

  it("keeps equality strict for numeric strings", () => {
    const scored: ConditionContext = { result: { score: "90" } };
    expect(evaluateCondition("result.score === 90", scored)).toBe(false);
    expect(evaluateCondition("result.score !== 90", scored)).toBe(true);
    expect(evaluateCondition('result.score === "90"', scored)).toBe(true);
  });

  it("treats ordering operators as numeric only", () => {
    // "80" is a numeric string, so it compares as the number 80.
    expect(evaluateCondition("result.label > 10", context)).toBe(true);
    expect(evaluateCondition("status > 10", context)).toBe(false);
    expect(evaluateCondition("result.hasData > 0", context)).toBe(false);
    expect(evaluateCondition("result.empty < 1", context)).toBe(false);
    expect(evaluateCondition("result.metrics > 0", context)).toBe(false);
    expect(evaluateCondition("result.items.0.score < 4", context)).toBe(true);
    expect(evaluateCondition("result.items.length >= 2", context)).toBe(true);
  });

  it("is false for a missing path under every operator, !== included", () => {
    for (const op of COMPARISON_OPERATORS) {
      expect(evaluateCondition(`result.nope ${op} 1`, context)).toBe(false);
      expect(evaluateCondition(`nope.deeper ${op} 0`, context)).toBe(false);
    }
    expect(evaluateCondition('nope !== "anything"', context)).toBe(false);
    expect(evaluateCondition("nope !== null", context)).toBe(false);
  });

  it("tolerates surrounding and missing whitespace", () => {
    expect(evaluateCondition("  confidence>0.8  ", context)).toBe(true);
    expect(evaluateCondition("confidence\t>\t0.8", context)).toBe(true);
  });

  it("is false for prototype keys", () => {
    expect(evaluateCondition("constructor !== null", context)).toBe(false);
    expect(evaluateCondition("__proto__ !== null", context)).toBe(false);
    expect(evaluateCondition("prototype !== null", context)).toBe(false);
    expect(evaluateCondition('result.constructor.name === "Object"', context)).toBe(false);
    expect(evaluateCondition("toString !== null", context)).toBe(false);
    expect(evaluateCondition("hasOwnProperty !== 1", context)).toBe(false);
    expect(evaluateCondition("result.items.length !== 0", context)).toBe(true);
    expect(evaluateCondition("result.items.map !== null", context)).toBe(false);
  });

  it("is false for a context that throws", () => {
    const hostile = new Proxy(
      {},
      {
        getOwnPropertyDescriptor() {
          throw new Error("trap");
        },
      },
    );
    expect(evaluateCondition("a === 1", hostile)).toBe(false);
  });
});

describe("buildConditionContext", () => {
  it("defaults confidence to 0 and fixes status to completed", () => {
    expect(buildConditionContext({ result: { a: 1 } })).toEqual({
      confidence: 0,
      result: { a: 1 },
      status: "completed",
    });
    expect(buildConditionContext({ confidence: null, result: null })).toEqual({
      confidence: 0,
      result: null,
      status: "completed",
    });
    expect(buildConditionContext({ confidence: 0.4, result: "text" })).toEqual({
      confidence: 0.4,
      result: "text",
      status: "completed",
    });
  });
});
