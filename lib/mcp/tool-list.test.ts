/**
 * The published tool schemas in the form strict tool-calling modes accept (the
 * MCP Inspector's portability check: no type arrays, no subschema without a
 * keyword), and tools/list no larger than before that change.
 */
import { describe, expect, it } from "vitest";
import { TOOL_LIST } from "./server";

/** tools/list before the schemas were made portable (issue 31): 79,588 bytes. */
const BYTES_BEFORE = 79_588;

const KEYWORDS = ["type", "anyOf", "oneOf", "allOf", "$ref", "enum", "const", "not"];

/** Every subschema of a schema with its path, the schema itself first. */
function subschemas(schema: unknown, path: string): [string, Record<string, unknown>][] {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return [];
  const node = schema as Record<string, unknown>;
  const found: [string, Record<string, unknown>][] = [[path, node]];
  for (const key of ["properties", "patternProperties", "$defs", "definitions"]) {
    for (const [name, sub] of Object.entries((node[key] as object | undefined) ?? {})) {
      found.push(...subschemas(sub, `${path}.${key}.${name}`));
    }
  }
  for (const key of ["items", "additionalProperties", "not", "propertyNames"]) {
    found.push(...subschemas(node[key], `${path}.${key}`));
  }
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    const list = node[key];
    if (Array.isArray(list)) {
      list.forEach((sub, index) => {
        found.push(...subschemas(sub, `${path}.${key}[${index}]`));
      });
    }
  }
  return found;
}

const ALL = TOOL_LIST.flatMap((tool) => [
  ...subschemas(tool.inputSchema, `${tool.name}.inputSchema`),
  ...subschemas(tool.outputSchema, `${tool.name}.outputSchema`),
]);

describe("the published tool schemas", () => {
  it("use no type arrays: a nullable type is an anyOf", () => {
    expect(ALL.filter(([, node]) => Array.isArray(node.type)).map(([path]) => path)).toEqual([]);
  });

  it("have a keyword in every subschema", () => {
    const bare = ALL.filter(
      ([path, node]) => !path.endsWith("Schema") && !KEYWORDS.some((key) => key in node),
    );
    expect(bare.map(([path]) => path)).toEqual([]);
  });

  it("still say that a nullable field takes null", () => {
    const nullableText = ALL.filter(
      ([, node]) =>
        JSON.stringify(node.anyOf) === JSON.stringify([{ type: "string" }, { type: "null" }]),
    );
    expect(nullableText.length).toBeGreaterThan(50);
  });

  it("keep tools/list as lean as before, or leaner", () => {
    const bytes = Buffer.byteLength(JSON.stringify({ tools: TOOL_LIST }));
    expect(bytes).toBeLessThanOrEqual(BYTES_BEFORE);
  });
});
