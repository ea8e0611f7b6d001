import { describe, expect, it } from "vitest";
import { findPatternKeyword } from "./schema-patterns";

const EVIL = "^(a+)+$";

describe("findPatternKeyword", () => {
  it("finds pattern and patternProperties wherever a subschema can be", () => {
    const cases: [unknown, string][] = [
      [{ type: "string", pattern: EVIL }, "#/pattern"],
      [{ properties: { code: { type: "string", pattern: EVIL } } }, "#/properties/code/pattern"],
      [{ patternProperties: { "^x-": {} } }, "#/patternProperties"],
      [{ properties: { patternProperties: { "(a+)+": {} } } }, "#/properties/patternProperties"],
      [{ items: { pattern: EVIL } }, "#/items/pattern"],
      [{ items: [{}, { pattern: EVIL }] }, "#/items/1/pattern"],
      [{ prefixItems: [{ pattern: EVIL }] }, "#/prefixItems/0/pattern"],
      [{ definitions: { a: { pattern: EVIL } } }, "#/definitions/a/pattern"],
      [{ $defs: { "a/b~c": { pattern: EVIL } } }, "#/$defs/a~1b~0c/pattern"],
      [{ anyOf: [{ type: "number" }, { pattern: EVIL }] }, "#/anyOf/1/pattern"],
      [{ oneOf: [{ pattern: EVIL }] }, "#/oneOf/0/pattern"],
      [{ allOf: [{ pattern: EVIL }] }, "#/allOf/0/pattern"],
      [{ not: { pattern: EVIL } }, "#/not/pattern"],
      [{ if: { pattern: EVIL } }, "#/if/pattern"],
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's then keyword, never awaited
      [{ then: { pattern: EVIL } }, "#/then/pattern"],
      [{ else: { pattern: EVIL } }, "#/else/pattern"],
      [{ additionalProperties: { pattern: EVIL } }, "#/additionalProperties/pattern"],
      [{ propertyNames: { pattern: EVIL } }, "#/propertyNames/pattern"],
      [{ dependentSchemas: { a: { pattern: EVIL } } }, "#/dependentSchemas/a/pattern"],
      // A $ref can make any part of the document a schema.
      [{ "x-unused": { pattern: EVIL } }, "#/x-unused/pattern"],
      [
        {
          type: "object",
          properties: {
            rows: {
              type: "array",
              items: {
                type: "object",
                properties: { id: { anyOf: [{ type: "string", pattern: EVIL }] } },
              },
            },
          },
        },
        "#/properties/rows/items/properties/id/anyOf/0/pattern",
      ],
    ];
    for (const [schema, path] of cases) {
      expect(findPatternKeyword(schema)?.path, JSON.stringify(schema)).toBe(path);
    }
    expect(findPatternKeyword({ patternProperties: { "^x-": {} } })?.keyword).toBe(
      "patternProperties",
    );
  });

  it("accepts schemas without regular expressions, including a property named pattern", () => {
    expect(
      findPatternKeyword({
        type: "object",
        properties: {
          pattern: { type: "string", description: "The wallpaper's pattern." },
          patternProperties: { type: "object", description: "named so, a plain schema" },
          date: { type: "string", format: "date" },
        },
        required: ["pattern"],
      }),
    ).toBeUndefined();
  });

  it("walks a deeply nested schema without overflowing the stack", () => {
    let schema: Record<string, unknown> = { type: "string", pattern: EVIL };
    for (let depth = 0; depth < 50_000; depth++) schema = { not: schema };
    expect(findPatternKeyword(schema)?.path).toMatch(/^#(\/not){50000}\/pattern$/);
  });
});
