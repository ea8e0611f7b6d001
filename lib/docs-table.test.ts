/**
 * The docs' tables that no one module owns, held to what they list: README.md's
 * pages to docs/, docs/protocol.md's MCP packages to package.json. The others
 * are held beside the code they list (docs/architecture.md, "To add a …").
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { codeNames, docTable } from "./docs-table";

describe("docTable", () => {
  it("refuses a table that is not there, rather than reading none", () => {
    expect(() => docTable("README.md", "no such header")).toThrow(
      'README.md: no table headed "no such header"',
    );
  });
});

describe("README.md's table of pages", () => {
  it("links every page of docs/, each once", () => {
    const linked = docTable("README.md", "page").map(([page = ""]) => {
      const [, text, target] = /^\[(.+)\]\((.+)\)$/.exec(page) ?? [];
      expect(text, page).toBe(target);
      return target;
    });
    expect(linked.sort()).toEqual(
      readdirSync("docs")
        .filter((name) => name.endsWith(".md"))
        .map((name) => `docs/${name}`)
        .sort(),
    );
  });
});

describe("docs/protocol.md's table of MCP packages", () => {
  it("gives each @modelcontextprotocol package with the version and kind package.json has", () => {
    const manifest = JSON.parse(readFileSync("package.json", "utf8")) as Record<
      "dependencies" | "devDependencies",
      Record<string, string>
    >;
    const installed = (["dependencies", "devDependencies"] as const).flatMap((kind) =>
      Object.entries(manifest[kind])
        .filter(([name]) => name.startsWith("@modelcontextprotocol/"))
        .map(([name, version]) => `${name} ${version} ${kind.replace(/ies$/, "y")}`),
    );
    const documented = docTable("docs/protocol.md", "package").map(([what = "", where = ""]) => {
      const [name] = codeNames(what);
      return `${name} ${what.slice(what.lastIndexOf("`") + 1).trim()} ${where.split(":")[0]}`;
    });
    expect(documented.sort()).toEqual(installed.sort());
  });
});
