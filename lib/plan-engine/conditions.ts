/**
 * The branching expression evaluator of the spec page "branching-conditions.md",
 * "Expression Evaluation": `<dot-path> <operator> <literal>`, nothing more.
 *
 * It never runs code: no `eval`, no `Function`, no property writes, and path
 * lookups only read own properties, so an expression written by an LLM cannot
 * reach the prototype chain or the globals. Anything it cannot parse is `false`.
 */

/** A right-hand side after literal parsing (branching-conditions.md, "Right side"). */
export type LiteralValue = string | number | boolean | null;

/** The context a condition is evaluated against; see `buildConditionContext`. */
export type ConditionContext = Readonly<Record<string, unknown>>;

export const COMPARISON_OPERATORS = ["===", "!==", ">=", "<=", ">", "<"] as const;
export type ComparisonOperator = (typeof COMPARISON_OPERATORS)[number];

export interface OperatorDefinition {
  readonly op: ComparisonOperator;
  /** Total: returns a boolean for any input and never throws. */
  readonly evaluate: (left: unknown, right: LiteralValue) => boolean;
}

/**
 * Expressions are written by an LLM and stored with the plan; a sane condition
 * fits in a line, and a cap keeps validation cheap and error messages readable.
 * The spec sets no limit; 500 characters is Cairn's choice.
 */
export const MAX_CONDITION_EXPRESSION_LENGTH = 500;

/**
 * Path segments that lead from any object to its constructor or prototype. They
 * are refused at parse time and never resolved, whatever the context holds.
 */
const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(["constructor", "__proto__", "prototype"]);

// The spec's examples are identifiers joined by dots; numeric segments after the
// first let a condition index an array in a result (`result.items.0.score`).
const DOT_PATH = /^[A-Za-z_$][\w$]*(?:\.(?:[A-Za-z_$][\w$]*|\d+))*$/;

// Strict on purpose: `Number()` alone would accept "", " ", "0x10", "1_0" or
// "Infinity", none of which a person writing `score >= 80` means as a number.
const NUMBER_LITERAL = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function numeric(compare: (left: number, right: number) => boolean) {
  return (left: unknown, right: LiteralValue): boolean =>
    isFiniteNumber(left) && isFiniteNumber(right) && compare(left, right);
}

/**
 * Scanned in this order; the first operator whose text occurs anywhere in the
 * expression splits it (branching-conditions.md, "Supported Operators"). `>=`
 * and `<=` precede `>` and `<` so `a >= 1` is never read as `a > "= 1"`.
 *
 * A left side that resolved to `undefined` (a missing path) is false for every
 * operator, `!==` included (branching-conditions.md, "Safety guarantees"): a
 * typo in a path must not make a negative condition fire.
 */
export const OPERATORS: readonly OperatorDefinition[] = [
  { op: "===", evaluate: (left, right) => left !== undefined && left === right },
  { op: "!==", evaluate: (left, right) => left !== undefined && left !== right },
  { op: ">=", evaluate: numeric((left, right) => left >= right) },
  { op: "<=", evaluate: numeric((left, right) => left <= right) },
  { op: ">", evaluate: numeric((left, right) => left > right) },
  { op: "<", evaluate: numeric((left, right) => left < right) },
];

const ORDERING_OPERATORS: ReadonlySet<ComparisonOperator> = new Set([">=", "<=", ">", "<"]);

function isObjectLike(value: unknown): value is object {
  return (typeof value === "object" && value !== null) || typeof value === "function";
}

/**
 * Walks a dot-path through own properties only. Answers `undefined` for a
 * missing segment, an empty segment, a primitive or null on the way, and any
 * `constructor` / `__proto__` / `prototype` segment, so `toString` or
 * `constructor.name` can never reach `Object.prototype`.
 */
export function resolvePath(context: unknown, path: string): unknown {
  let current: unknown = context;
  for (const segment of path.split(".")) {
    if (segment === "" || FORBIDDEN_SEGMENTS.has(segment)) return undefined;
    if (!isObjectLike(current) || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/**
 * branching-conditions.md, "Right side: literal parsing": `true`, `false`,
 * `null`, a string in double or single quotes (quotes stripped, no escapes), a
 * number; anything else stays the trimmed raw string, so `status === completed`
 * compares with the string "completed".
 *
 * A numeral too large for a double (`1e999`) stays a string too: as `Infinity`
 * it could never satisfy a numeric comparison, and as a string it is reported
 * by `parseConditionExpression` instead of failing silently.
 */
export function parseLiteral(raw: string): LiteralValue {
  const text = raw.trim();
  if (text === "true") return true;
  if (text === "false") return false;
  if (text === "null") return null;
  if (text.length >= 2) {
    const first = text[0];
    if ((first === '"' || first === "'") && text.endsWith(first)) return text.slice(1, -1);
  }
  if (NUMBER_LITERAL.test(text)) {
    const value = Number(text);
    if (Number.isFinite(value)) return value;
  }
  return text;
}

export type ParsedCondition =
  | {
      readonly ok: true;
      readonly path: string;
      readonly operator: ComparisonOperator;
      readonly value: LiteralValue;
    }
  | { readonly ok: false; readonly reason: string };

const OPERATOR_LIST = COMPARISON_OPERATORS.join(", ");

function fail(reason: string): ParsedCondition {
  return { ok: false, reason };
}

function findOperator(
  expression: string,
): { readonly op: ComparisonOperator; readonly index: number } | undefined {
  for (const { op } of OPERATORS) {
    const index = expression.indexOf(op);
    if (index !== -1) return { op, index };
  }
  return undefined;
}

/**
 * Parses an expression or says, in words an LLM can act on, why it cannot. Plan
 * creation runs this over every condition (CONVENTIONS.md, "An operator table
 * for expressions") so a typo is reported at once instead of silently never
 * firing later.
 *
 * Beyond the spec's grammar it refuses an ordering operator whose right side is
 * not a number: such a condition could never be true, since `>=`, `<=`, `>` and
 * `<` compare numbers only.
 */
export function parseConditionExpression(expression: string): ParsedCondition {
  if (typeof expression !== "string") return fail("expression must be a string");
  if (expression.length > MAX_CONDITION_EXPRESSION_LENGTH) {
    return fail(
      `expression is ${expression.length} characters long; the limit is ${MAX_CONDITION_EXPRESSION_LENGTH}`,
    );
  }
  if (expression.trim() === "") {
    return fail(`expression is empty (expected e.g. "confidence > 0.8")`);
  }

  const found = findOperator(expression);
  if (found === undefined) {
    const hint = /[!=]=/.test(expression) ? "; use === or !== rather than == or !=" : "";
    return fail(`no comparison operator (expected one of ${OPERATOR_LIST})${hint}`);
  }

  const left = expression.slice(0, found.index).trim();
  const right = expression.slice(found.index + found.op.length).trim();

  if (left === "") return fail("left side is empty (expected a dot-path such as result.hasData)");
  if (!DOT_PATH.test(left)) {
    return fail(
      `left side '${left}' is not a dot-path of identifiers (expected e.g. confidence, status or result.metrics.accuracy)`,
    );
  }
  if (left.split(".").some((segment) => FORBIDDEN_SEGMENTS.has(segment))) {
    return fail(`left side '${left}' may not reference constructor/__proto__/prototype`);
  }
  if (right === "") {
    return fail(`right side is empty (expected a literal: a number, "text", true, false or null)`);
  }

  const value = parseLiteral(right);
  if (ORDERING_OPERATORS.has(found.op) && !isFiniteNumber(value)) {
    return fail(
      `right side '${right}' of '${found.op}' is not a number (ordering operators compare numbers only, e.g. confidence >= 0.8)`,
    );
  }

  return { ok: true, path: left, operator: found.op, value };
}

function operatorDefinition(op: ComparisonOperator): OperatorDefinition | undefined {
  return OPERATORS.find((definition) => definition.op === op);
}

/**
 * True only when the expression parses and its comparison holds against the
 * context. Never throws: an unparseable expression, a missing path, a context
 * that is not a plain object all give `false`.
 */
export function evaluateCondition(expression: string, context: ConditionContext): boolean {
  try {
    const parsed = parseConditionExpression(expression);
    if (!parsed.ok) return false;
    const definition = operatorDefinition(parsed.operator);
    if (definition === undefined) return false;
    return definition.evaluate(resolvePath(context, parsed.path), parsed.value);
  } catch {
    // Last line of defence only, e.g. a context built from a Proxy whose traps
    // throw. The logic above does not throw for any string.
    return false;
  }
}

export interface ConditionContextInput {
  readonly confidence?: number | null;
  readonly result: unknown;
}

// A type alias, not an interface: aliases get an implicit index signature, so
// the built context can be passed wherever a `ConditionContext` is expected.
export type BuiltConditionContext = {
  readonly confidence: number;
  readonly result: unknown;
  readonly status: "completed";
};

/**
 * branching-conditions.md, "Evaluation Context": conditions see the step's
 * confidence (0 when none was given), its structured result, and a status that
 * is always "completed" because branching runs only after a successful step.
 */
export function buildConditionContext(input: ConditionContextInput): BuiltConditionContext {
  return { confidence: input.confidence ?? 0, result: input.result, status: "completed" };
}
