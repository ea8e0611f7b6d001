/**
 * The docs' tables of tools hold to `TOOLS`: docs/protocol.md lists the tools a
 * model sees and docs/mcp-apps.md the cards' app-only ones, each once, and its
 * table of cards each card's resource with the tools that link it; and
 * docs/execution-loop.md's size limits to the tools' published input schemas. The
 * tables keep the order a reader follows (a plan's life), not tools/list's,
 * which is by file name (scripts/tool-index.ts), so only the names are held.
 */
import { describe, expect, it } from "vitest";
import { codeNames, docTable } from "../docs-table";
import { MAX_REVIEWS_PER_STEP } from "../services/reviews/review-limits";
import { MAX_PLAN_DEFINITION_BYTES } from "../services/shared/plan-definitions";
import { CARD_URIS, isAppOnly } from "./apps";
import { publishedInputSchema } from "./published-schema";
import { TOOLS } from "./tools";

/** The tool names of the table headed "tool" in `doc`, one per row. */
const tableNames = (doc: string) =>
  docTable(doc, "tool").map(([tool = ""]) => codeNames(tool).join());

describe("the docs' tool tables", () => {
  it("docs/protocol.md lists every tool a model sees, each once", () => {
    expect(tableNames("docs/protocol.md").sort()).toEqual(
      TOOLS.filter((tool) => !isAppOnly(tool))
        .map((tool) => tool.name)
        .sort(),
    );
  });

  it("docs/mcp-apps.md lists the cards' app-only tools, each once", () => {
    expect(tableNames("docs/mcp-apps.md").sort()).toEqual(
      TOOLS.filter((tool) => isAppOnly(tool))
        .map((tool) => tool.name)
        .sort(),
    );
  });

  it("docs/mcp-apps.md lists each card with the tools that link it", () => {
    const linking = (uri: string) =>
      TOOLS.filter(
        (tool) => (tool._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri === uri,
      )
        .map((tool) => tool.name)
        .sort();
    expect(
      docTable("docs/mcp-apps.md", "card").map(([, resource = "", linkedFrom = ""]) => [
        codeNames(resource).join(),
        codeNames(linkedFrom).sort(),
      ]),
    ).toEqual(CARD_URIS.map((uri) => [uri, linking(uri)]));
  });
});

type Schema = {
  description?: string;
  maxLength?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  [key: string]: unknown;
};

/** Every property named `name` anywhere in `schema`, however deeply nested. */
function propertiesNamed(schema: unknown, name: string): Schema[] {
  if (typeof schema !== "object" || schema === null) return [];
  const node = schema as Schema;
  const own = node.properties?.[name];
  return [
    ...(own === undefined ? [] : [own]),
    ...Object.values(node).flatMap((child) =>
      Array.isArray(child)
        ? child.flatMap((item) => propertiesNamed(item, name))
        : propertiesNamed(child, name),
    ),
  ];
}

/** What a limit cell asks of one field's schema: a size of JSON, characters, or items of characters. */
function meets(field: Schema, limit: string): boolean {
  const numbers = [...limit.matchAll(/\d[\d,]*/g)].map((match) =>
    Number(match[0].replaceAll(",", "")),
  );
  const [first, second] = numbers;
  if (/KB of JSON/.test(limit)) return field.description?.includes(`Max ${first} KB.`) ?? false;
  if (/, of [\d,]+ characters each/.test(limit))
    return field.maxItems === first && field.items?.maxLength === second;
  return field.maxLength === first;
}

describe("docs/execution-loop.md's size limits", () => {
  it("are each listed field's limit in the tools' published input schemas", () => {
    const published = new Map<string, unknown>(
      TOOLS.map((tool) => [tool.name, publishedInputSchema(tool.inputSchema)]),
    );
    const wrong = docTable("docs/execution-loop.md", "field").flatMap(
      ([fields = "", tools = "", limit = ""]) => {
        const schemas = codeNames(tools).flatMap((tool) => published.get(tool) ?? []);
        expect(schemas.length, tools).toBeGreaterThan(0);
        // "`name` / `researchQuestion`" with "300 / 5,000 characters": one limit each.
        const limits = limit.includes(" / ") ? limit.split(" / ") : [];
        return codeNames(fields).flatMap((path, index) => {
          const name = path.slice(path.lastIndexOf(".") + 1);
          const found = schemas.flatMap((schema) => propertiesNamed(schema, name));
          if (found.length === 0) return [`${path}: not in ${tools}`];
          // Counted, not a schema's size: the reviews one step may have; evidence has its own table.
          if (name === "evidence")
            return limit.startsWith("docs/evidence.md") ? [] : [`${path}: ${limit}`];
          const own = limits[index] ?? limit;
          return found.every((field) => meets(field, own)) ? [] : [`${path} (${tools}): ${limit}`];
        });
      },
    );
    expect(wrong).toEqual([]);
  });

  it("give the reviews one step may have", () => {
    const [row] = docTable("docs/execution-loop.md", "field").filter(
      ([field]) => field === "reviews of one step",
    );
    expect(row?.[2]).toBe(`${MAX_REVIEWS_PER_STEP} (docs/reviews.md)`);
  });

  it("give the total a plan's steps may hold", () => {
    const [row] = docTable("docs/execution-loop.md", "field").filter(([field]) =>
      field?.startsWith("all of a plan's steps together"),
    );
    expect(row?.[2]).toBe(
      `${MAX_PLAN_DEFINITION_BYTES.toLocaleString("en-US")} bytes (${MAX_PLAN_DEFINITION_BYTES / 1024 / 1024} MB) a plan`,
    );
  });
});
