import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  buildConditionContext,
  type ConditionContext,
  evaluateCondition,
  numericString,
  OPERATORS,
  parseConditionExpression,
  resolvePath,
} from "./conditions";

const RUNS = { numRuns: 1000 };
const TRAP = "__cairnPwned";

const context: ConditionContext = buildConditionContext({
  confidence: 0.7,
  result: {
    hasData: true,
    count: 3,
    label: "x",
    nothing: null,
    nested: { deep: { value: 1 } },
    items: [1, "two", { three: 3 }],
  },
});

const FRAGMENTS = [
  "===",
  "!==",
  ">=",
  "<=",
  ">",
  "<",
  "==",
  "=",
  "!",
  '"',
  "'",
  "`",
  ".",
  "..",
  " ",
  "(",
  ")",
  "[",
  "]",
  "{",
  "}",
  ";",
  ",",
  "\\",
  "\n",
  "\u0000",
  "constructor",
  "__proto__",
  "prototype",
  "toString",
  "valueOf",
  "process.exit()",
  "process",
  "globalThis",
  `globalThis.${TRAP} = true`,
  "require('child_process')",
  "import('fs')",
  "eval",
  "Function",
  "this",
  "confidence",
  "status",
  "result",
  "result.hasData",
  "result.items.0",
  "hasData",
  "true",
  "false",
  "null",
  "undefined",
  "NaN",
  "Infinity",
  "0",
  "-1",
  "0.8",
  "1e3",
  "0x10",
  '"completed"',
  "'x'",
  `\${x}`,
];

// Built from pieces of the grammar and of typical injection attempts, so that
// many samples get past the operator scan and reach the path and literal code.
const adversarial = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...FRAGMENTS) },
      { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(""));

const PATH_PARTS = [
  "confidence",
  "status",
  "result",
  "hasData",
  "count",
  "label",
  "nothing",
  "nested",
  "deep",
  "value",
  "items",
  "0",
  "1",
  "2",
  "three",
  "length",
  "missing",
  "constructor",
  "__proto__",
  "prototype",
  "toString",
];

// Paths that exist in `context`, so that many samples compare a real value.
const KNOWN_PATHS = [
  "confidence",
  "status",
  "result.hasData",
  "result.count",
  "result.label",
  "result.nothing",
  "result.nested.deep.value",
  "result.items.0",
  "result.items.1",
  "result.items.2.three",
  "result.items.length",
];

const LITERALS = [
  "true",
  "false",
  "null",
  "0",
  "1",
  "3",
  "-1",
  "0.7",
  "1e3",
  "0x10",
  ".5",
  '"x"',
  "'two'",
  "0.5",
  "2",
  '"completed"',
  "completed",
  '"',
  "",
];

// Mostly well-formed `path op literal`, so that a good share of samples parse
// and the agreement properties below compare real evaluations.
const structured = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(...KNOWN_PATHS),
      fc
        .array(fc.constantFrom(...PATH_PARTS), { minLength: 1, maxLength: 4 })
        .map((parts) => parts.join(".")),
    ),
    fc.constantFrom("", " ", "  "),
    fc.constantFrom("===", "!==", ">=", "<=", ">", "<", "==", "=>"),
    fc.constantFrom("", " ", "\t"),
    fc.oneof(fc.constantFrom(...LITERALS), adversarial),
  )
  .map(([path, before, op, after, literal]) => `${path}${before}${op}${after}${literal}`);

const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.string({ minLength: 490, maxLength: 520 }),
  adversarial,
  structured,
);

const CODE_INJECTIONS = [
  `x === (globalThis.${TRAP} = true)`,
  `(globalThis.${TRAP} = true) === true`,
  `globalThis.${TRAP} === (globalThis.${TRAP} = true)`,
  `constructor.constructor("globalThis.${TRAP} = true")() === 1`,
  `result.constructor.constructor('globalThis.${TRAP}=true')() !== 0`,
  `x === \${globalThis.${TRAP} = true}`,
  `x === \`\${globalThis.${TRAP} = true}\``,
  `eval("globalThis.${TRAP} = true") === 1`,
  `Function("globalThis.${TRAP} = true")() === 1`,
  `x === 1; globalThis.${TRAP} = true`,
  `__proto__.polluted === 1`,
  `__proto__.polluted = 1 === 1`,
  `constructor.prototype.polluted === 1`,
  `result.__proto__.polluted !== (Object.prototype.polluted = 1)`,
  `process.exit() === 1`,
  `process.exit(1) === 1`,
];

function trapValue(): unknown {
  return Reflect.get(globalThis, TRAP);
}

function expectPrototypesClean(): void {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(pristineObjectPrototype);
  expect(Reflect.get({}, "polluted")).toBeUndefined();
}

const pristineObjectPrototype = Object.getOwnPropertyNames(Object.prototype).sort();

describe("evaluateCondition under arbitrary input", () => {
  beforeEach(() => {
    Reflect.set(globalThis, TRAP, false);
  });

  afterEach(() => {
    Reflect.deleteProperty(globalThis, TRAP);
  });

  it("never throws and always answers a boolean", () => {
    fc.assert(
      fc.property(anyString, (expression) => {
        const result = evaluateCondition(expression, context);
        expect(typeof result).toBe("boolean");
      }),
      RUNS,
    );
  });

  it("never throws for arbitrary contexts", () => {
    fc.assert(
      fc.property(adversarial, fc.anything({ withNullPrototype: true }), (expression, value) => {
        const ctx = { result: value, status: "completed", confidence: 1 };
        expect(typeof evaluateCondition(expression, ctx)).toBe("boolean");
        expect(typeof evaluateCondition(expression, { value } as ConditionContext)).toBe("boolean");
      }),
      RUNS,
    );
  });

  it("never runs code from a fixed list of injections", () => {
    for (const expression of CODE_INJECTIONS) {
      expect(evaluateCondition(expression, context)).toBe(false);
    }
    expect(trapValue()).toBe(false);
    expectPrototypesClean();
  });

  it("never runs code or pollutes prototypes for generated injections", () => {
    const injection = fc
      .tuple(adversarial, fc.constantFrom(...CODE_INJECTIONS), adversarial)
      .map(([before, payload, after]) => `${before}${payload}${after}`);
    fc.assert(
      fc.property(fc.oneof(injection, adversarial), (expression) => {
        evaluateCondition(expression, context);
        parseConditionExpression(expression);
        expect(trapValue()).toBe(false);
      }),
      RUNS,
    );
    expectPrototypesClean();
  });
});

describe("parseConditionExpression under arbitrary input", () => {
  it("never throws, and ok:false always means evaluateCondition is false", () => {
    fc.assert(
      fc.property(anyString, (expression) => {
        const parsed = parseConditionExpression(expression);
        if (parsed.ok) return;
        expect(parsed.reason.length).toBeGreaterThan(0);
        expect(evaluateCondition(expression, context)).toBe(false);
      }),
      RUNS,
    );
  });

  it("agrees with evaluateCondition when it parses", () => {
    fc.assert(
      fc.property(fc.oneof(structured, anyString), (expression) => {
        const parsed = parseConditionExpression(expression);
        if (!parsed.ok) return;
        const operator = OPERATORS.find((o) => o.op === parsed.operator);
        const expected = operator?.evaluate(resolvePath(context, parsed.path), parsed.value);
        expect(evaluateCondition(expression, context)).toBe(expected);
      }),
      RUNS,
    );
  });

  it("round-trips generated well-formed expressions", () => {
    const segment = fc.stringMatching(/^[A-Za-z_$][\w$]{0,6}$/);
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("."));
    const number = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
    fc.assert(
      fc.property(path, fc.constantFrom(">=", "<=", ">", "<"), number, (p, op, n) => {
        const parsed = parseConditionExpression(`${p} ${op} ${n}`);
        // String(n) of a finite double always matches the strict numeric regex
        // ("1e-7", "-0.5", "123"); only a forbidden path segment can fail it.
        const forbidden = p
          .split(".")
          .some((s) => ["constructor", "__proto__", "prototype"].includes(s));
        if (forbidden) {
          expect(parsed.ok).toBe(false);
          return;
        }
        expect(parsed).toEqual({ ok: true, path: p, operator: op, value: n === 0 ? 0 : n });
      }),
      RUNS,
    );
  });
});

describe("numeric strings under ordering operators", () => {
  const finite = fc.double({ noNaN: true, noDefaultInfinity: true });
  const threshold = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
  const padding = fc.constantFrom("", " ", "  ", "\t", "\n");
  const ordering = fc.constantFrom(">=", "<=", ">", "<");

  it("compare a numeral in a string exactly as the number itself", () => {
    fc.assert(
      fc.property(finite, padding, padding, ordering, threshold, (n, before, after, op, t) => {
        // String(n) of a finite double is always a numeral of the literal grammar.
        const asString = { x: `${before}${String(n)}${after}` };
        expect(evaluateCondition(`x ${op} ${t}`, asString)).toBe(
          evaluateCondition(`x ${op} ${t}`, { x: n }),
        );
      }),
      RUNS,
    );
  });

  it("are false under every ordering operator for any other string", () => {
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: "binary" }),
      fc
        .tuple(
          fc.constantFrom("", "+", "-", ".", "0x", " "),
          finite,
          fc.constantFrom("", "abc", ".", "_1", "e", "%"),
        )
        .map(([prefix, n, suffix]) => `${prefix}${String(n)}${suffix}`),
      fc.constantFrom("", " ", "0x10", "90abc", "Infinity", "-Infinity", "NaN", "1e999", ".5"),
    );
    fc.assert(
      fc.property(text, threshold, (s, t) => {
        const lower = evaluateCondition(`x < ${t}`, { x: s });
        const atLeast = evaluateCondition(`x >= ${t}`, { x: s });
        if (numericString(s) === undefined) {
          for (const op of [">=", "<=", ">", "<"]) {
            expect(evaluateCondition(`x ${op} ${t}`, { x: s })).toBe(false);
          }
        } else {
          // A number: exactly one side of the threshold holds.
          expect(lower !== atLeast).toBe(true);
        }
      }),
      RUNS,
    );
  });
});

describe("resolvePath under arbitrary input", () => {
  const segment = fc.oneof(
    fc.constantFrom(
      "constructor",
      "__proto__",
      "prototype",
      "toString",
      "valueOf",
      "hasOwnProperty",
      "isPrototypeOf",
      "__defineGetter__",
      "__lookupGetter__",
      "propertyIsEnumerable",
      "toLocaleString",
      "length",
      "name",
      "call",
      "apply",
      "bind",
      "map",
    ),
    fc.string({ maxLength: 6 }),
  );
  const path = fc.array(segment, { maxLength: 5 }).map((segments) => segments.join("."));

  it("finds nothing at all in an empty object", () => {
    fc.assert(
      fc.property(path, (p) => {
        expect(resolvePath({}, p)).toBeUndefined();
      }),
      RUNS,
    );
  });

  it("never returns a function from a data context", () => {
    fc.assert(
      fc.property(path, (p) => {
        expect(typeof resolvePath(context, p)).not.toBe("function");
        expect(typeof resolvePath({ a: [], b: "s", c: { d: 1 } }, p)).not.toBe("function");
      }),
      RUNS,
    );
  });
});
