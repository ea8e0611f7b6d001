/**
 * `TOOLS` (lib/mcp/tools/index.ts, written by scripts/tool-index.ts from the
 * tool files) holds every tool those files export: a tool exported in a form
 * the script does not read would otherwise be served by nobody, silently.
 */
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "./define-tool";
import { TOOLS } from "./tools";

function isTool(value: unknown): value is ToolDefinition {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as ToolDefinition).name === "string" &&
    typeof (value as ToolDefinition).run === "function"
  );
}

describe("the tool registry", () => {
  it("holds every tool each file of lib/mcp/tools exports, once", async () => {
    const modules = readdirSync("lib/mcp/tools")
      .filter((file) => file.endsWith(".ts") && file !== "index.ts" && !file.endsWith(".test.ts"))
      .map((file) => file.slice(0, -".ts".length));
    const defined: string[] = [];
    for (const module of modules) {
      const exported: Record<string, unknown> = await import(`./tools/${module}.ts`);
      defined.push(
        ...Object.values(exported)
          .filter(isTool)
          .map((tool) => tool.name),
      );
    }
    expect(defined.length).toBeGreaterThan(20);
    expect(TOOLS.map((tool) => tool.name).sort()).toEqual(defined.sort());
  });
});
