import { describe, expect, it } from "vitest";
import { citationSummary } from "./citation-summary";

describe("citationSummary", () => {
  it("claims nothing when nothing is cited", () => {
    expect(citationSummary(0, 0)).toBe("the deliverable cites no source.");
  });

  it("counts the deliverable's citations, and of them those the plan read", () => {
    expect(citationSummary(1, 1)).toBe("the deliverable cites 1 source, read by this plan.");
    expect(citationSummary(1, 0)).toBe(
      "the deliverable cites 1 source, none of them read by this plan.",
    );
    expect(citationSummary(3, 3)).toBe("the deliverable cites 3 sources, all read by this plan.");
    expect(citationSummary(2, 1)).toBe(
      "the deliverable cites 2 sources, 1 of them read by this plan.",
    );
  });
});
