import { describe, expect, it } from "vitest";
import {
  CITATION_CHECK_BYTES,
  checkCitations,
  citationScanSteps,
  scanCitations,
} from "./citations";

const check = (
  content: string,
  plan: ReadonlySet<string>,
  claims: Parameters<typeof checkCitations>[2],
) => checkCitations(scanCitations(content), plan, claims);

const PLAN = new Set(["https://example.org/report", "doi:10.1000/abc", "arxiv:2101.01234"]);

describe("checkCitations", () => {
  it("finds links, DOIs and arXiv ids in any spelling and says which the plan read", () => {
    const result = check(
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
    expect(result.citations.map(({ key, status }) => [key, status])).toEqual([
      ["https://example.org/report", "plan_source"],
      ["doi:10.1000/abc", "plan_source"],
      ["arxiv:2101.01234", "plan_source"],
      ["https://elsewhere.example/page", "not_read"],
      ["https://en.wikipedia.org/wiki/Foo_(bar)", "not_read"],
      ["https://onlinelibrary.example.com/doi/10.1000/abc", "not_read"],
    ]);
    expect(result.citations[0]?.written).toBe("http://example.org/report/?utm_source=x");
    expect(result.truncated).toBe(false);
  });

  it("lists citations and uncited key claims within CITATION_CHECK_BYTES each, saying it cut them", () => {
    // Links whose canonical form percent-encodes each é (two bytes) into six.
    const links = Array.from(
      { length: 240 },
      (_, i) => `http://a${i}.example/${"é".repeat(1_960)}`,
    );
    const claims = Array.from({ length: 100 }, (_, i) => ({
      stepId: "s",
      stepOrder: 1,
      text: `Claim ${i} ${"c".repeat(1_990)}`,
      sourceKeys: [`https://never-cited.example/${i}`],
    }));
    const result = check(links.join(" "), new Set(), claims);
    const bytes = (items: unknown[]) =>
      items.reduce<number>((sum, item) => sum + Buffer.byteLength(JSON.stringify(item)), 0);
    expect(bytes(result.citations)).toBeLessThanOrEqual(CITATION_CHECK_BYTES);
    expect(bytes(result.uncitedKeyClaims)).toBeLessThanOrEqual(CITATION_CHECK_BYTES);
    expect(result.citations.length).toBeGreaterThan(0);
    expect(result.citations.length).toBeLessThan(links.length);
    expect(result.uncitedKeyClaims.map((claim) => claim.text)).toEqual(
      claims.slice(0, result.uncitedKeyClaims.length).map((claim) => claim.text),
    );
    expect(result.uncitedKeyClaims.length).toBeLessThan(claims.length);
    expect(result.truncated).toBe(true);
  });

  it("resolves numbered references through the reference list and names those that lead nowhere", () => {
    const result = check(
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
    expect(result.unresolvedReferences).toEqual(["[2]", "[5]"]);
  });

  it("reports key claims none of whose sources is cited", () => {
    const claims = [
      { stepId: "s1", stepOrder: 1, text: "cited", sourceKeys: ["doi:10.1000/abc"] },
      { stepId: "s1", stepOrder: 1, text: "uncited", sourceKeys: ["arxiv:2101.01234"] },
    ];
    expect(check("As shown (https://doi.org/10.1000/abc).", PLAN, claims).uncitedKeyClaims).toEqual(
      [claims[1]],
    );
  });
});

// Shapes that once made the check quadratic (a 30 KB deliverable held the server
// for 30 s). These assert the results; the time bound over MCP is the worst-shape
// test in tests/worst-shape.test.ts.
describe("scanCitations on worst shapes", () => {
  it("trims a link's unopened closing brackets, however many", () => {
    const scan = scanCitations(`http://a.example/${")".repeat(100_000)}${"]".repeat(100_000)}`);
    expect([...scan.cited.keys()]).toEqual(["https://a.example"]);
  });

  it("keeps a link's own balanced brackets", () => {
    const scan = scanCitations(`(see https://w.example/Foo_(bar)${").".repeat(50_000)}`);
    expect([...scan.cited.values()].map((c) => c.written)).toEqual(["https://w.example/Foo_(bar)"]);
  });

  it("reads many numbered uses once", () => {
    expect(scanCitations("[1]\n".repeat(100_000)).unresolvedReferences).toEqual(["[1]"]);
  });

  it("reads a use of many ranges once per range, in numeric order", () => {
    const use = `[${"7-3, 120-5, 30–32, 0-99, ".repeat(20_000)}0]`;
    const scan = scanCitations(`${use}\n[5]: https://a.example/five\n`);
    const expected = [...Array.from({ length: 100 }, (_, n) => n), 120].filter((n) => n !== 5);
    expect(scan.unresolvedReferences).toEqual(expected.map((n) => `[${n}]`));
  });

  it("reads a path of many slashes", () => {
    const scan = scanCitations(`https://a.example/${"/".repeat(1_970)}x//`);
    expect([...scan.cited.keys()]).toEqual([`https://a.example/${"/".repeat(1_970)}x`]);
  });

  it("leaves out a link longer than any source's, which no plan can have read", () => {
    const query = "a=1&".repeat(100_000);
    const scan = scanCitations(`https://a.example/?${query} and https://b.example/ok`);
    expect([...scan.cited.keys()]).toEqual(["https://b.example/ok"]);
  });

  it("resolves a link written many times once, and yields between pieces of work", () => {
    const steps = citationScanSteps("https://a.example/p ".repeat(20_000));
    let yields = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) yields++;
    expect([...step.value.cited.keys()]).toEqual(["https://a.example/p"]);
    expect(yields).toBeGreaterThan(100);
  });
});
