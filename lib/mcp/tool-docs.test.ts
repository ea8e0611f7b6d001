/**
 * The docs' tables of tools hold to `TOOLS`: docs/protocol.md lists the tools a
 * model sees and docs/mcp-apps.md the cards' app-only ones, each once. The
 * tables keep the order a reader follows (a plan's life), not tools/list's,
 * which is by file name (scripts/tool-index.ts), so only the names are held.
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
  it("docs/protocol.md lists every tool a model sees, each once", () => {
    expect(tableNames("docs/protocol.md", "tool").sort()).toEqual(
      TOOLS.filter((tool) => !isAppOnly(tool))
        .map((tool) => tool.name)
        .sort(),
    );
  });

  it("docs/mcp-apps.md lists the cards' app-only tools, each once", () => {
    expect(tableNames("docs/mcp-apps.md", "tool").sort()).toEqual(
      TOOLS.filter((tool) => isAppOnly(tool))
        .map((tool) => tool.name)
        .sort(),
    );
  });
});
