/**
 * What tools/list says of a tool's zod schemas (docs/protocol.md, the published schemas).
 * An input schema is published whole, since the model fills it in; an output
 * schema only as an outline, since the answer itself carries the rest.
 */
import type { Tool, ToolAnnotations } from "@modelcontextprotocol/server";
import { z } from "zod";

type Node = Record<string, unknown>;

/**
 * A tool's input schema as published. An object says `additionalProperties:
 * false` (unless it is open on purpose, with a catchall): every tool refuses a
 * field it does not know (`refuseUnknownFields`), so the published schema says
 * the same. A string format (uuid, date-time, e-mail) is named by `format`
 * alone, without the regular expression zod checks it with: the name says the
 * same to a reader in a tenth of the bytes, and Cairn checks the value anyway.
 */
export function publishedInputSchema(schema: z.ZodType): Tool["inputSchema"] {
  return toJsonSchema(schema, "input", ({ zodSchema, jsonSchema: node }) => {
    const def = zodSchema._zod.def;
    if (def.type === "object" && def.catchall === undefined) node.additionalProperties = false;
    const format = (def as { pattern?: RegExp }).pattern;
    if (node.format !== undefined && format !== undefined && node.pattern === format.source) {
      delete node.pattern;
    }
  });
}

/**
 * A tool's output schema as published: the answer's own fields, each with its
 * type (a constant's value, whether it may be null), and nothing more: a nested
 * object is `{ "type": "object" }`, a list of them `{ "type": "array" }` (its
 * items' `{ "type": "object" }` was 26 bytes of 21 lists, issue 45), with no prose. The answer describes the
 * rest itself, and the whole schemas were over half of tools/list, in every
 * agent's context (issue 41). A client that checks `structuredContent` against
 * it still can: the outline accepts every answer the whole schema does. It is
 * open (no `additionalProperties: false`) and names no `required` field: a
 * client may keep tools/list for an hour (SERVER_CACHE_HINTS), and an answer
 * of a newer Cairn, with a field more or less, must still be valid to it.
 */
export function publishedOutputSchema(schema: z.ZodType): Tool["outputSchema"] {
  const { properties } = toJsonSchema(schema, "output", () => {});
  if (typeof properties !== "object" || properties === null) {
    throw new Error(
      "A tool's output schema must be an object with properties (MCP's outputSchema).",
    );
  }
  const outline: Node = {};
  for (const [name, field] of Object.entries(properties)) outline[name] = typeOnly(field as Node);
  return { type: "object", properties: outline };
}

/**
 * A field's type without its fields: type and const, a list's item type, a
 * union's branches. Not an enum's values: the answer carries the value, and
 * the plan and step statuses alone were 1.7 KB of every agent's context.
 */
function typeOnly(node: Node): Node {
  const union = node.anyOf ?? node.oneOf;
  if (Array.isArray(union)) {
    // Branches that differed only below their type are one branch now; anyOf,
    // since oneOf would refuse a value two such branches both accept.
    const seen = new Map<string, Node>();
    for (const branch of union.map(typeOnly)) seen.set(JSON.stringify(branch), branch);
    const branches = [...seen.values()];
    return branches.length === 1 ? (branches[0] as Node) : { anyOf: branches };
  }
  const kept: Node = {};
  for (const key of ["type", "const"]) if (key in node) kept[key] = node[key];
  if (typeof node.items === "object" && node.items !== null) {
    const items = typeOnly(node.items as Node);
    if (!(Object.keys(items).length === 1 && items.type === "object")) kept.items = items;
  }
  return kept;
}

type Override = NonNullable<Parameters<typeof z.toJSONSchema>[1]>["override"];

function toJsonSchema(schema: z.ZodType, io: "input" | "output", override: Override) {
  const { $schema: _draft, ...published } = z.toJSONSchema(schema, {
    target: "draft-7",
    io,
    unrepresentable: "any",
    override,
  });
  portable(published);
  // No $schema: every keyword used means the same in draft-07 and in 2020-12,
  // MCP's default, and 36 copies of the URL were a good part of tools/list.
  return published as Tool["inputSchema"];
}

/**
 * A schema node in the form strict tool-calling modes accept (the Inspector's
 * portability check): a nullable type as `anyOf` instead of a type array
 * (["string", "null"]), and no subschema without a keyword. A record's values
 * and a list's items that may be anything say nothing (`{}`), so they are left
 * out: JSON Schema allows any property and any item by default. A record's
 * `propertyNames: { type: "string" }` is left out too, since JSON's keys are strings.
 */
function portable(node: unknown): void {
  if (typeof node !== "object" || node === null || Array.isArray(node)) return;
  const schema = node as Node;
  // Only subschemas: an enum's, const's or default's values are data, not schemas.
  for (const key of ["properties", "patternProperties", "$defs", "definitions"]) {
    const map = schema[key];
    if (typeof map === "object" && map !== null) Object.values(map).forEach(portable);
  }
  for (const key of ["items", "additionalProperties", "not", "propertyNames"])
    portable(schema[key]);
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    const list = schema[key];
    if (Array.isArray(list)) list.forEach(portable);
  }
  portableNode(schema);
}

function portableNode(node: Node): void {
  const { type } = node;
  if (Array.isArray(type)) {
    delete node.type;
    node.anyOf = type.map((one) => ({ type: one }));
  }
  if (isEmptySchema(node.additionalProperties)) delete node.additionalProperties;
  if (isEmptySchema(node.items)) delete node.items;
  const names = node.propertyNames as Node | undefined;
  if (names && Object.keys(names).length === 1 && names.type === "string") {
    delete node.propertyNames;
  }
  // zod's int() bounds every integer by JavaScript's safe range: no caller
  // comes near it, and it was 27 bytes of every integer field.
  if (node.maximum === Number.MAX_SAFE_INTEGER) delete node.maximum;
  if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
}

/**
 * A tool's annotations as published: the hints MCP's defaults already say
 * (destructiveHint true, idempotentHint false, openWorldHint true) left out,
 * and a read-only tool's destructive and idempotent hints too, which MCP reads
 * only on a tool that writes. `readOnlyHint` always, since a client reads it first.
 */
export function publishedAnnotations(annotations: ToolAnnotations): ToolAnnotations {
  const { readOnlyHint = false, destructiveHint, idempotentHint, openWorldHint } = annotations;
  return {
    readOnlyHint,
    ...(!readOnlyHint && destructiveHint === false ? { destructiveHint } : {}),
    ...(!readOnlyHint && idempotentHint === true ? { idempotentHint } : {}),
    ...(openWorldHint === false ? { openWorldHint } : {}),
  };
}

function isEmptySchema(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.keys(value).length === 0;
}
