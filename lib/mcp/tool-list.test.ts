/**
 * The published tool schemas in the form strict tool-calling modes accept (the
 * MCP Inspector's portability check: no type arrays, no subschema without a
 * keyword), and tools/list no larger than before that change.
 */
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { TOOL_LIST } from "./server";
import { TOOLS } from "./tools";

/**
 * What tools/list may weigh, in bytes of JSON. Before the schemas were made
 * portable (issue 31) the 18 tools of then took 79,588; portable, with
 * get_skill, 77,722. Since then evidence (issue 33: add_step_evidence, and
 * the evidence fields of a result, a step's context and a deliverable) brought
 * the tools a model sees to 92,553, and the MCP App cards' app-only tools
 * (issue 30: hidden from the model by the hosts that render the cards) take
 * 12,124. A person's entered result on submit_user_decision (issue 39: a
 * checkpoint whose outputSchema the agent cannot meet is still decided) added
 * 516 and create_research_plan's hint 67 and list_active_plans' awaitingSteps
 * 146 (issue 42), less 102 of a shorter
 * description, and the review's step and result schema in the card's read 600 to the
 * app-only tools. Paged evidence (issue 40: read_evidence, and each context's
 * cursors and totals of sources and claims) brought the tools a model sees to
 * 102,061 before that, and 1,000 to the app-only tools (the card's first page
 * of claims with its cursor). A change that adds to either says so here; issue 41 asks
 * for at most 40 KB.
 */
const MODEL_TOOLS_BYTES = 102_772;
const APP_ONLY_TOOLS_BYTES = 13_724;

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
    // Every field of an answer that may be null, by the tool's own zod schema.
    const nullable = TOOLS.flatMap((tool) =>
      Object.entries((tool.outputSchema as z.ZodObject).shape)
        .filter(([, field]) => field.safeParse(null).success)
        .map((entry) => [tool.name, entry[0]] as const),
    );
    expect(nullable.length).toBeGreaterThan(20);
    const published = new Map(
      TOOL_LIST.map((tool) => [tool.name, tool.outputSchema?.properties as Record<string, object>]),
    );
    const withoutNull = nullable.filter(([tool, field]) => {
      const node = published.get(tool)?.[field] as { anyOf?: object[] };
      return !node.anyOf?.some((branch) => JSON.stringify(branch) === '{"type":"null"}');
    });
    expect(withoutNull).toEqual([]);
  });

  it("keep tools/list within its measured size", () => {
    const appOnly = (tool: (typeof TOOL_LIST)[number]) =>
      JSON.stringify(tool._meta?.ui ?? {}).includes('"visibility":["app"]');
    const bytes = (tools: typeof TOOL_LIST) => Buffer.byteLength(JSON.stringify({ tools }));
    expect(bytes(TOOL_LIST.filter((tool) => !appOnly(tool)))).toBeLessThanOrEqual(
      MODEL_TOOLS_BYTES,
    );
    expect(bytes(TOOL_LIST.filter(appOnly))).toBeLessThanOrEqual(APP_ONLY_TOOLS_BYTES);
  });
});
