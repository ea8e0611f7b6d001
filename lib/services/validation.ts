import type { z } from "zod";
import { AppError } from "../plan-engine/app-error";

/** Parses a use case's input; a failure is a VALIDATION_ERROR naming every bad field. */
export function parseInput<T extends z.ZodType>(schema: T, raw: unknown): z.output<T> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) {
    const field = unstorableText(parsed.data);
    if (field) {
      throw new AppError(
        "VALIDATION_ERROR",
        `${field}: contains a NUL character (\\u0000) or an unpaired UTF-16 surrogate, which cannot be stored. Remove it, or send the text as valid Unicode.`,
        { field },
      );
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
 * string fails, which the caller would see as an INTERNAL_ERROR. The text is
 * the caller's to fix, so it is a VALIDATION_ERROR naming the field instead.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");
const unstorable = (text: string) => text.includes("\0") || LONE_SURROGATE.test(text);

/** The path of the first string (value or key) in `value` that PostgreSQL cannot store, or undefined. */
function unstorableText(value: unknown): string | undefined {
  // Iterative, so that deeply nested JSON cannot exhaust the call stack; each
  // node keeps its key and parent, and a path is spelled out only when found.
  type Node = { value: unknown; key: string | number | null; parent: Node | null };
  const pathOf = (node: Node, key?: string) => {
    const keys: string[] = key === undefined ? [] : [key];
    for (let at: Node | null = node; at && at.key !== null; at = at.parent) {
      keys.unshift(String(at.key));
    }
    return (
      keys.map((k) => k.replaceAll("\0", "?").replace(LONE_SURROGATES, "?")).join(".") || "input"
    );
  };
  const stack: Node[] = [{ value, key: null, parent: null }];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    const current = node.value;
    if (typeof current === "string") {
      if (unstorable(current)) return pathOf(node);
    } else if (Array.isArray(current)) {
      for (let index = 0; index < current.length; index += 1) {
        stack.push({ value: current[index], key: index, parent: node });
      }
    } else if (current !== null && typeof current === "object") {
      for (const [key, item] of Object.entries(current)) {
        if (unstorable(key)) return `${pathOf(node, key)} (a key)`;
        stack.push({ value: item, key, parent: node });
      }
    }
  }
  return undefined;
}
