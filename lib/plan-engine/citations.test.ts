import { describe, expect, it } from "vitest";
import { checkCitations } from "./citations";

const PLAN = new Set(["https://example.org/report", "doi:10.1000/abc", "arxiv:2101.01234"]);

describe("checkCitations", () => {
  it("finds links, DOIs and arXiv ids in any spelling and says which the plan read", () => {
    const check = checkCitations(
      [
        "Capacity grew 12% ([report](http://example.org/report/?utm_source=x)).",
        "See doi:10.1000/ABC, and arXiv:2101.01234v2; also <https://elsewhere.example/page>.",
        "(Background: https://en.wikipedia.org/wiki/Foo_(bar).)",
        "Again https://doi.org/10.1000/abc.",
        "Publisher copy: https://onlinelibrary.example.com/doi/10.1000/abc",
      ].join("\n"),
      PLAN,
      [],
    );
    expect(check.citations.map(({ key, status }) => [key, status])).toEqual([
      ["https://example.org/report", "plan_source"],
      ["doi:10.1000/abc", "plan_source"],
      ["arxiv:2101.01234", "plan_source"],
      ["https://elsewhere.example/page", "not_read"],
      ["https://en.wikipedia.org/wiki/Foo_(bar)", "not_read"],
      ["https://onlinelibrary.example.com/doi/10.1000/abc", "not_read"],
    ]);
    expect(check.citations[0]?.written).toBe("http://example.org/report/?utm_source=x");
    expect(check.truncated).toBe(false);
  });

  it("resolves numbered references through the reference list and names those that lead nowhere", () => {
    const check = checkCitations(
      [
        "Capacity grew [1]. Costs fell [2, 3]. Policy changed [4-5]. A link [6](https://example.org/report).",
        "",
        "## References",
        "1. Report, https://example.org/report",
        "2. A book without a link",
        "[3]: doi:10.1000/abc",
        "4. arXiv:2101.01234",
      ].join("\n"),
      PLAN,
      [],
    );
    expect(check.unresolvedReferences).toEqual(["[2]", "[5]"]);
  });

  it("reports key claims none of whose sources is cited", () => {
    const claims = [
      { stepId: "s1", stepOrder: 1, text: "cited", sourceKeys: ["doi:10.1000/abc"] },
      { stepId: "s1", stepOrder: 1, text: "uncited", sourceKeys: ["arxiv:2101.01234"] },
    ];
    expect(
      checkCitations("As shown (https://doi.org/10.1000/abc).", PLAN, claims).uncitedKeyClaims,
    ).toEqual([claims[1]]);
  });
});
