/**
 * The docs' tables of tools hold to `TOOLS`: docs/protocol.md lists the tools a
 * model sees and docs/mcp-apps.md the cards' app-only ones, each once, in the
 * order tools/list shows them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isAppOnly } from "./apps";
import { TOOLS } from "./tools";

/** The first cells of the table whose header starts with `| ${header} |`: the names in backticks. */
function tableNames(doc: string, header: string): string[] {
  const lines = readFileSync(doc, "utf8").split("\n");
  const start = lines.findIndex((line) => line.startsWith(`| ${header} `));
  expect(start, `${doc}: the table of ${header}`).toBeGreaterThanOrEqual(0);
  const rows = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .split("|")[1]
        ?.trim()
        .replace(/^`(.*)`$/, "$1") ?? "",
    );
  }
  return rows;
}

describe("the docs' tool tables", () => {
  it("docs/protocol.md lists every tool a model sees, as tools/list orders them", () => {
    expect(tableNames("docs/protocol.md", "tool")).toEqual(
      TOOLS.filter((tool) => !isAppOnly(tool)).map((tool) => tool.name),
    );
  });

  it("docs/mcp-apps.md lists the cards' app-only tools", () => {
    expect(tableNames("docs/mcp-apps.md", "tool")).toEqual(
      TOOLS.filter((tool) => isAppOnly(tool)).map((tool) => tool.name),
    );
  });
});
