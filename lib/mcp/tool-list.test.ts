/**
 * The published tool schemas in the form strict tool-calling modes accept (the
 * MCP Inspector's portability check: no type arrays, no subschema without a
 * keyword), and tools/list within its measured size and 40 KB.
 */
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { TOOL_LIST } from "./server";
import { TOOLS } from "./tools";

/**
 * What tools/list may weigh, in bytes of JSON. Portable (issue 31), 19 tools
 * took 77,722; evidence, paging and the MCP App cards (issues 30, 33, 39, 40,
 * 42) brought the tools a model sees to 102,772 and the cards' app-only tools
 * (hidden from the model by the hosts that render the cards) to 13,724. Issue
 * 41 asked for at most 40 KB: terse descriptions, output schemas published as
 * outlines and string formats without zod's regular expressions
 * (lib/mcp/published-schema.ts) took them to 39,385 and 3,932; bounded
 * contexts (issue 40: the steps' and reviews' cursors, each value's
 * `shortened`, read_evidence's `of`, `part` and `offset`) and the card's
 * per-field proposal then 39,900 (the model's, after shorter descriptions of
 * arguments, get_next_step and two fields). Issue 44's quorum (approvalsRequired
 * on create_research_plan and request_user_review, `approvals` in three answers)
 * fit within the same sizes after shorter descriptions of a dozen tools and
 * fields. History and forks (issue 43) added get_plan_history, fork_plan and
 * modify_plan's revert_revision (2,000 bytes), paid for by annotations without
 * MCP's defaults, output outlines without enum values (1.7 KB) and shorter
 * descriptions: 39,917 and 3,458 after both were merged. Issue 45 made
 * room for the next tools (1.5 KB): lists of objects in output outlines
 * without their items' type, size limits as "Max 64 KB." and shorter
 * descriptions took them to MODEL_TOOLS_BYTES and APP_ONLY_TOOLS_BYTES below,
 * with MODEL_TOOLS tools a model sees. A new tool a model sees may add up to
 * NEW_TOOL_BYTES without an edit here (a paged read tool is about 700: its
 * name, title, a line of description, planId, limit, cursor and an outline of
 * four fields), so adding one is its own files only; any other growth, or a
 * larger tool, says so here, and the tools a model sees stay within 40 KB.
 */
const MODEL_TOOLS_BYTES = 38_471;
const MODEL_TOOLS = 23;
const NEW_TOOL_BYTES = 800;
const APP_ONLY_TOOLS_BYTES = 3_335;
const MODEL_TOOLS_BOUND = 40_000;

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

  it("keep tools/list within its measured size, and the tools a model sees within 40 KB", () => {
    const appOnly = (tool: (typeof TOOL_LIST)[number]) =>
      JSON.stringify(tool._meta?.ui ?? {}).includes('"visibility":["app"]');
    const bytes = (tools: typeof TOOL_LIST) => Buffer.byteLength(JSON.stringify({ tools }));
    const forModel = TOOL_LIST.filter((tool) => !appOnly(tool));
    const modelTools = bytes(forModel);
    const newTools = Math.max(0, forModel.length - MODEL_TOOLS);
    expect(modelTools).toBeLessThanOrEqual(MODEL_TOOLS_BYTES + newTools * NEW_TOOL_BYTES);
    expect(modelTools).toBeLessThanOrEqual(MODEL_TOOLS_BOUND);
    expect(bytes(TOOL_LIST.filter(appOnly))).toBeLessThanOrEqual(APP_ONLY_TOOLS_BYTES);
  });
});
