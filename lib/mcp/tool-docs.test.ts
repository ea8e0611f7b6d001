/**
 * The docs' tables of tools hold to `TOOLS`: docs/protocol.md lists the tools a
 * model sees and docs/mcp-apps.md the cards' app-only ones, each once, and its
 * table of cards each card's resource with the tools that link it. The
 * tables keep the order a reader follows (a plan's life), not tools/list's,
 * which is by file name (scripts/tool-index.ts), so only the names are held.
 */
import { describe, expect, it } from "vitest";
import { codeNames, docTable } from "../docs-table";
import { CARD_URIS, isAppOnly } from "./apps";
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
