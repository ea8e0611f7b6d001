/**
 * The branching expression evaluator of docs/branching-conditions.md,
 * "Expression Evaluation": `<dot-path> <operator> <literal>`, nothing more.
 *
 * It never runs code: no `eval`, no `Function`, no property writes, and path
 * lookups only read own properties, so an expression written by an LLM cannot
 * reach the prototype chain or the globals. Anything it cannot parse is `false`.
 */

/** A right-hand side after literal parsing (docs/branching-conditions.md). */
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
 * The reference design sets no limit; 500 characters is Cairn's choice.
 */
export const MAX_CONDITION_EXPRESSION_LENGTH = 500;

/**
 * Path segments that lead from any object to its constructor or prototype. They
 * are refused at parse time and never resolved, whatever the context holds.
 */
const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(["constructor", "__proto__", "prototype"]);

// The reference design's examples are identifiers joined by dots; numeric segments after the
// first let a condition index an array in a result (`result.items.0.score`).
const DOT_PATH = /^[A-Za-z_$][\w$]*(?:\.(?:[A-Za-z_$][\w$]*|\d+))*$/;

// Strict on purpose: `Number()` alone would accept "", " ", "0x10", "1_0" or
// "Infinity", none of which a person writing `score >= 80` means as a number.
// The one numeral grammar of this file: literals on the right side and numeric
// strings on the left side of an ordering operator are both read with it.
const NUMBER_LITERAL = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

// What a writer may mean as a number but `NUMBER_LITERAL` does not read: a
// leading or trailing decimal point (`.5`, `-.5`, `5.`), a leading `+`, or a
// numeral too large for a double (`1e999`). Unquoted, such a right side is
// refused by `parseConditionExpression` instead of silently becoming a string.
const LOOSE_NUMERAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/**
 * A string that is, once trimmed, a complete numeral of `NUMBER_LITERAL` with a
 * finite value, as that number; anything else `undefined`. So "90", " 90 ",
 * "-1.5" and "1e3" are numbers, while "", " ", "0x10", "90abc", "+5", ".5",
 * "1_000", "Infinity", "NaN" and "1e999" are not.
 */
export function numericString(value: string): number | undefined {
  const text = value.trim();
  if (!NUMBER_LITERAL.test(text)) return undefined;
  const number = Number(text);
  return Number.isFinite(number) ? number : undefined;
}

function orderingOperand(value: unknown): number | undefined {
  if (isFiniteNumber(value)) return value;
  if (typeof value === "string") return numericString(value);
  return undefined;
}

function numeric(compare: (left: number, right: number) => boolean) {
  return (left: unknown, right: LiteralValue): boolean => {
    // At most one side is read from a string: two strings are never compared.
    if (typeof left === "string" && typeof right === "string") return false;
    const a = orderingOperand(left);
    const b = orderingOperand(right);
    return a !== undefined && b !== undefined && compare(a, b);
  };
}

/**
 * Scanned in this order; the first operator whose text occurs anywhere in the
 * expression splits it (docs/branching-conditions.md). `>=`
 * and `<=` precede `>` and `<` so `a >= 1` is never read as `a > "= 1"`.
 *
 * A left side that resolved to `undefined` (a missing path) is false for every
 * operator, `!==` included (docs/branching-conditions.md): a
 * typo in a path must not make a negative condition fire.
 *
 * Equality (`===`, `!==`) is strict and type-aware, as the reference design says: the
 * string "90" is not `=== 90` (and is `!== 90`); write `=== "90"` to match the
 * string. There is no `==` or `!=`.
 *
 * Ordering (`>=`, `<=`, `>`, `<`) compares finite numbers only. LLMs often put
 * numbers in quotes (`"score": "90"`), so a string operand facing a number is
 * read as a number when, trimmed, it is a complete numeral of the literal
 * grammar (`numericString`): "90", " 90 ", "-1.5", "1e3" compare as numbers;
 * "", " ", "0x10", "90abc", "+5", ".5", "Infinity", "NaN" or "1e999" make the
 * comparison false, as do booleans, null, NaN, ±Infinity, arrays and objects.
 * Two strings are never compared (the parser only gives ordering operators a
 * number on the right, so this arises only when the table is called directly).
 *
 * A right side must be written as the grammar reads numbers: `0.5`, not `.5`
 * (`parseConditionExpression` refuses `.5`, `5.`, `+5` and `1e999` under every
 * operator and says what to write instead).
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
 * docs/branching-conditions.md: `true`, `false`,
 * `null`, a string in double or single quotes (quotes stripped, no escapes), a
 * number; anything else stays the trimmed raw string, so `status === completed`
 * compares with the string "completed".
 *
 * A numeral too large for a double (`1e999`) stays a string too, as do `.5`,
 * `5.` and `+5`: `parseConditionExpression` reports all of them, under every
 * operator, instead of letting them fail silently.
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

/**
 * Why an unquoted right side that looks like a number is refused, with the
 * spelling to use instead: `.5` -> `0.5`, `-.5` -> `-0.5`, `5.` -> `5`,
 * `+5` -> `5`. Quoted (`".5"`), it is a string and not refused.
 */
function looseNumeralReason(right: string): string {
  if (!Number.isFinite(Number(right))) {
    return `right side '${right}' is out of range for a number (beyond about ±1.8e308)`;
  }
  const fixed = right
    .replace(/^\+/, "")
    .replace(/^(-?)\./, (_match, sign: string) => `${sign}0.`)
    .replace(/\.(?=[eE]|$)/, "");
  return `right side '${right}' is not a number Cairn reads; write ${fixed} (digits on both sides of a decimal point, no leading +), or quote it to compare with a string`;
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
 * creation runs this over every condition (docs/architecture.md, "An operator table
 * for expressions") so a typo is reported at once instead of silently never
 * firing later.
 *
 * Beyond the reference design's grammar it refuses an ordering operator whose right side is
 * not a number: such a condition could never be true, since `>=`, `<=`, `>` and
 * `<` compare numbers only. Under every operator it also refuses an unquoted
 * right side that looks like a number but is not one the grammar reads (`.5`,
 * `-.5`, `5.`, `+5`, `1e999`): as the raw string it would otherwise become, it
 * would not equal the number its writer meant.
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
  if (typeof value === "string" && LOOSE_NUMERAL.test(right)) {
    return fail(looseNumeralReason(right));
  }
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
  /**
   * What an omitted confidence reads as: 0 after submit_step_result
   * (docs/branching-conditions.md); absent after an approve whose proposal
   * carried none, so that no condition fires on a value nobody reported.
   */
  readonly missingConfidence?: "zero" | "absent";
}

// A type alias, not an interface: aliases get an implicit index signature, so
// the built context can be passed wherever a `ConditionContext` is expected.
export type BuiltConditionContext = {
  readonly confidence?: number;
  readonly result: unknown;
  readonly status: "completed";
};

/**
 * docs/branching-conditions.md: conditions see the step's
 * confidence (0 when none was given, unless `missingConfidence` is "absent"),
 * its structured result, and a status that is always "completed" because
 * branching runs only after a successful step.
 */
export function buildConditionContext(input: ConditionContextInput): BuiltConditionContext {
  const confidence = input.confidence ?? (input.missingConfidence === "absent" ? undefined : 0);
  return confidence === undefined
    ? { result: input.result, status: "completed" }
    : { confidence, result: input.result, status: "completed" };
}

/** The roots of `buildConditionContext`: what a condition's path can start with. */
export const CONDITION_CONTEXT_ROOTS = ["confidence", "status", "result"] as const;

/**
 * Why a parsed condition's path can never resolve against the context
 * `buildConditionContext` builds, with the path probably meant, or undefined
 * when it can. `confidence` and `status` are plain values with nothing under
 * them; everything the step returned is under `result`. A path outside these
 * resolves to nothing, and the condition would then never fire (`score >= 80`
 * is false even when `result.score` is 95), so plan creation refuses it.
 */
export function conditionPathProblem(
  path: string,
): { reason: string; suggestion: string } | undefined {
  const [root, ...rest] = path.split(".");
  if (root === "result") return undefined;
  if ((root === "confidence" || root === "status") && rest.length === 0) return undefined;
  const suggestion = root === "confidence" || root === "status" ? root : `result.${path}`;
  return {
    reason:
      root === "confidence" || root === "status"
        ? `'${path}' reads inside ${root}, which is a plain value (${root === "confidence" ? "a number" : '"completed"'})`
        : `'${path}' is not in the condition's context (${CONDITION_CONTEXT_ROOTS.join(", ")}); a step's own fields are under result`,
    suggestion,
  };
}
