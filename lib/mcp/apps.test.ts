import { describe, expect, it } from "vitest";
import { isAppOnly, mayCallAppOnly } from "./apps";
import { TOOLS } from "./tools";

describe("the cards' app-only tools", () => {
  it("are the read and decide tools of the cards, and only those", () => {
    expect(TOOLS.filter(isAppOnly).map((tool) => tool.name)).toEqual([
      "read_review_card",
      "decide_in_review_card",
      "read_plan_card",
    ]);
  });

  it("answer a 2026-07-28 client only when it declared the MCP Apps extension", () => {
    const capabilities = (value: unknown) => ({
      "io.modelcontextprotocol/clientCapabilities": value,
    });
    expect(
      mayCallAppOnly(
        capabilities({ extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [] } } }),
      ),
    ).toBe(true);
    expect(mayCallAppOnly(capabilities({ elicitation: {} }))).toBe(false);
    expect(mayCallAppOnly(capabilities({ extensions: { "other/ext": {} } }))).toBe(false);
    // A 2025-era request carries no capabilities: nothing to tell by.
    expect(mayCallAppOnly(undefined)).toBe(true);
  });
});
