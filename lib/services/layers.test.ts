/**
 * Imports run down the layers (docs/architecture.md, "The layers"): the use
 * cases import no door (not the web's session or actions, not the OAuth or MCP
 * routes, not the pages), and the web door imports neither the MCP nor the
 * OAuth door; what two of them share lives below them (`lib/http`, `lib/services`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/** An import from one of `folders` of lib/, or from app/, relative or by the `@/` alias. */
function importsFrom(folders: string[]): RegExp {
  const names = folders.join("|");
  return new RegExp(`from "(?:(?:\\.\\./)+(?:${names})/|@/(?:app|lib/(?:${names}))/)`);
}

const LAYERS = [
  { folder: "lib/services", above: importsFrom(["auth", "oauth", "web", "mcp"]) },
  { folder: "lib/web", above: importsFrom(["oauth", "mcp"]) },
];

describe.each(LAYERS)("$folder", ({ folder, above }) => {
  it("imports nothing from the doors above or beside it", () => {
    const files = (readdirSync(folder, { recursive: true }) as string[]).filter(
      (file) => file.endsWith(".ts") || file.endsWith(".tsx"),
    );
    const upward = files.flatMap((file) =>
      readFileSync(join(folder, file), "utf8")
        .split("\n")
        .filter((line) => above.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(upward).toEqual([]);
  });
});
