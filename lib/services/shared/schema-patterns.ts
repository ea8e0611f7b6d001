/**
 * extract_data validates the model's answer against the caller's JSON Schema
 * with Ajv, which compiles `pattern` and `patternProperties` into JavaScript
 * regular expressions. Those backtrack: a pattern like `^(a+)+$` against a long
 * answer blocks the event loop, and with it every other request of the server.
 * No linear-time regex engine is installed (re2 is native), so such schemas are
 * refused before Ajv sees them.
 */

export type PatternKeyword = {
  keyword: "pattern" | "patternProperties";
  /** A JSON Pointer into the caller's schema, e.g. `#/properties/code/pattern`. */
  path: string;
};

function pointerPart(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

/**
 * A key of `patternProperties` is compiled as a regular expression. One made of
 * letters, digits, `_`, `$` and `-` only has nothing to backtrack over, and these
 * are the keys of a schema: so a property that is merely *named*
 * "patternProperties" (its value a schema like { "type": "object" }) passes.
 */
const LITERAL_KEY = /^[\w$-]*$/;

function hasRegexKey(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.keys(value).some((key) => !LITERAL_KEY.test(key));
}

/**
 * The first `pattern` with a string value, or `patternProperties` with a key
 * that is a real regular expression, anywhere in the document; else undefined.
 * The whole document is searched, not only the places JSON Schema defines
 * subschemas (properties, items, $defs, anyOf, not, if, ...): a `$ref` can point
 * anywhere, so any part can become a schema. An object under `enum` or `const`
 * with a string-valued "pattern" member is therefore refused too, a rare and
 * harmless false alarm. Iterative, so a deeply nested schema cannot overflow
 * the stack.
 */
export function findPatternKeyword(schema: unknown): PatternKeyword | undefined {
  const stack: { value: unknown; path: string }[] = [{ value: schema, path: "#" }];
  while (stack.length > 0) {
    const { value, path } = stack.pop() as { value: unknown; path: string };
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) {
        stack.push({ value: value[index], path: `${path}/${index}` });
      }
      continue;
    }
    const record = value as Record<string, unknown>;
    if (typeof record.pattern === "string") return { keyword: "pattern", path: `${path}/pattern` };
    if (hasRegexKey(record.patternProperties)) {
      return { keyword: "patternProperties", path: `${path}/patternProperties` };
    }
    const keys = Object.keys(record);
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index] as string;
      stack.push({ value: record[key], path: `${path}/${pointerPart(key)}` });
    }
  }
  return undefined;
}
