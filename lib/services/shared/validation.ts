import "server-only";
import type { z } from "zod";
import { AppError } from "../../plan-engine/app-error";

/** Parses a use case's input; a failure is a VALIDATION_ERROR naming every bad field. */
export function parseInput<T extends z.ZodType>(schema: T, raw: unknown): z.output<T> {
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
    return `${path}: ${issue.message}`;
  });
  throw new AppError("VALIDATION_ERROR", `${problems.join("; ")}.`, {
    issues: parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message })),
  });
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
