/**
 * The use cases import no door (docs/architecture.md, "The layers"): not the
 * web's session or actions, not the OAuth or MCP routes, not the pages.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const DOORS =
  /from "(?:(?:\.\.\/)+(?:auth|oauth|web|mcp)\/|@\/(?:app|lib\/(?:auth|oauth|web|mcp))\/)/;

describe("lib/services", () => {
  it("imports nothing from the doors above it", () => {
    const folder = "lib/services";
    const files = (readdirSync(folder, { recursive: true }) as string[]).filter((file) =>
      file.endsWith(".ts"),
    );
    const upward = files.flatMap((file) =>
      readFileSync(join(folder, file), "utf8")
        .split("\n")
        .filter((line) => DOORS.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(upward).toEqual([]);
  });
});
