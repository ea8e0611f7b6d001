import "server-only";
import type { z } from "zod";
import { AppError } from "../../plan-engine/app-error";

/**
 * Parses a use case's input; a failure is a VALIDATION_ERROR naming every bad
 * field. A field the schema does not know is refused too (`refuseUnknownFields`),
 * never silently dropped.
 */
export function parseInput<T extends z.ZodType>(schema: T, raw: unknown): z.output<T> {
  refuseUnknownFields(schema, raw);
  const parsed = schema.safeParse(raw);
  if (parsed.success) {
    const problem = unstorable(parsed.data);
    if (problem) {
      throw new AppError("VALIDATION_ERROR", `${problem.field}: ${problem.message}`, {
        field: problem.field,
      });
    }
    return parsed.data;
  }
  const problems = parsed.error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join(".") : "input";
    return `${path}: ${missingField(schema, issue) ?? issue.message}`;
  });
  throw new AppError("VALIDATION_ERROR", `${problems.join("; ")}.`, {
    issues: parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message })),
  });
}

/**
 * A required field left out, said as such with what the field is for (zod's
 * own words, "expected object, received undefined", read as a type error).
 */
function missingField(schema: z.ZodType, issue: z.core.$ZodIssue): string | undefined {
  if (issue.code !== "invalid_type" || !issue.message.endsWith("received undefined")) {
    return undefined;
  }
  let at: z.ZodType | undefined = schema;
  for (const key of issue.path) {
    const shape: Record<string, z.ZodType> | undefined = at ? defOf(unwrap(at)).shape : undefined;
    at = typeof key === "string" ? shape?.[key] : undefined;
  }
  const about = at?.description?.replace(/\.$/, "");
  return `required${issue.expected ? ` (${issue.expected})` : ""} but missing${about ? `: ${about}` : ""}`;
}

/**
 * PostgreSQL stores no NUL character, in text or in jsonb, and its jsonb
 * refuses the `\udXXX` escape of an unpaired surrogate: a statement with such a
 * string fails, which the caller would see as an INTERNAL_ERROR. So would JSON
 * nested a few thousand levels deep, which JSON.stringify (writing jsonb, the
 * call log) cannot serialise without overflowing the stack. Both are the
 * caller's to fix, so they are a VALIDATION_ERROR naming the field instead.
 */
export const MAX_INPUT_DEPTH = 100;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");
/** Whether PostgreSQL cannot store (or compare) a text: a NUL, or an unpaired surrogate. */
export const unstorableText = (text: string) => text.includes("\0") || LONE_SURROGATE.test(text);
const UNSTORABLE_TEXT =
  "contains a NUL character (\\u0000) or an unpaired UTF-16 surrogate, which cannot be stored. Remove it, or send the text as valid Unicode.";

/** The first string (value or key) PostgreSQL cannot store, or value nested too deep, in `value`. */
function unstorable(value: unknown): { field: string; message: string } | undefined {
  // Iterative, so that deeply nested JSON cannot exhaust the call stack; each
  // node keeps its key and parent, and a path is spelled out only when found.
  type Node = { value: unknown; key: string | number | null; parent: Node | null; depth: number };
  const pathOf = (node: Node, key?: string) => {
    const keys: string[] = key === undefined ? [] : [key];
    for (let at: Node | null = node; at && at.key !== null; at = at.parent) {
      keys.unshift(String(at.key));
    }
    const shown = keys.length > 8 ? [...keys.slice(0, 8), "…"] : keys;
    return (
      shown.map((k) => k.replaceAll("\0", "?").replace(LONE_SURROGATES, "?")).join(".") || "input"
    );
  };
  const stack: Node[] = [{ value, key: null, parent: null, depth: 0 }];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    const current = node.value;
    if (typeof current === "string") {
      if (unstorableText(current)) return { field: pathOf(node), message: UNSTORABLE_TEXT };
    } else if (current !== null && typeof current === "object") {
      if (node.depth >= MAX_INPUT_DEPTH) {
        return {
          field: pathOf(node),
          message: `nested more than ${MAX_INPUT_DEPTH} levels deep; flatten the structure.`,
        };
      }
      const depth = node.depth + 1;
      if (Array.isArray(current)) {
        for (let index = 0; index < current.length; index += 1) {
          stack.push({ value: current[index], key: index, parent: node, depth });
        }
      } else {
        for (const [key, item] of Object.entries(current)) {
          if (unstorableText(key)) {
            return { field: `${pathOf(node, key)} (a key)`, message: UNSTORABLE_TEXT };
          }
          stack.push({ value: item, key, parent: node, depth });
        }
      }
    }
  }
  return undefined;
}

/**
 * The parts of a zod schema's definition the unknown-field walk reads. zod
 * strips an unknown key of a plain object without a word, so a misspelled
 * optional field (`branchingCondition` for `branchingConditions`) would be
 * accepted and ignored; this walk finds such keys at any depth instead.
 */
type SchemaDef = {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
};

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;

/** The object schema under wrappers (optional, nullable, default, a pipe's input), if any. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    const inner = def.innerType ?? (def.type === "pipe" ? def.in : undefined);
    if (!inner) return current;
    current = inner;
  }
}

export type UnknownField = { path: string; suggestion: string | undefined };

/** Every key of `raw` that `schema` has no field for, with the closest known name. */
export function unknownFields(schema: z.ZodType, raw: unknown, at = ""): UnknownField[] {
  const def = defOf(unwrap(schema));
  if (def.type === "array" && def.element && Array.isArray(raw)) {
    const element = def.element;
    return raw.flatMap((item, index) => unknownFields(element, item, `${at}[${index}]`));
  }
  // An object with a catchall (a looseObject, a record-like shape) is open on purpose.
  if (def.type !== "object" || !def.shape || def.catchall) return [];
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return [];
  const shape = def.shape;
  const known = Object.keys(shape);
  const found: UnknownField[] = [];
  for (const [key, value] of Object.entries(raw)) {
    const path = at ? `${at}.${key}` : key;
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (field) found.push(...unknownFields(field, value, path));
    else found.push({ path, suggestion: closestName(key, known) });
  }
  return found;
}

/** Throws VALIDATION_ERROR naming each unknown field and the field probably meant. */
export function refuseUnknownFields(schema: z.ZodType, raw: unknown): void {
  const found = unknownFields(schema, raw);
  if (found.length === 0) return;
  const parts = found.map(({ path, suggestion }) =>
    suggestion ? `${path} (did you mean ${suggestion}?)` : path,
  );
  throw new AppError(
    "VALIDATION_ERROR",
    `Unknown field${found.length > 1 ? "s" : ""} ${parts.join(", ")}: nothing was changed. Send only the fields this call describes.`,
    { unknownFields: found },
  );
}

/**
 * The known name nearest to `name` by edit distance (letter case ignored), if
 * it is close enough to be a slip: at most a third of the name's length (rounded up), and 3.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const limit = Math.min(3, Math.ceil(name.length / 3));
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance))
      best = { name: candidate, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        substitution,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}
