import { describe, expect, it } from "vitest";
import {
  claimStatus,
  claimsForReview,
  keyClaims,
  mergeSourceReads,
  normalContentDigest,
  sourcesFromFetches,
} from "./evidence";

const DIGEST = "a".repeat(64);

describe("sourcesFromFetches", () => {
  it("reads URLs and objects naming a page, and leaves out what names none", () => {
    expect(
      sourcesFromFetches([
        "https://example.org/a",
        { url: "https://example.org/b", title: "B", summary: "facts", contentDigest: DIGEST },
        { href: "doi:10.1000/xyz" },
        { note: "no page here" },
        42,
        null,
        ["https://example.org/c"],
      ]),
    ).toEqual([
      { url: "https://example.org/a" },
      { url: "https://example.org/b", title: "B", extract: "facts", contentDigest: DIGEST },
      { url: "doi:10.1000/xyz", title: undefined, extract: undefined, contentDigest: undefined },
    ]);
  });
});

describe("mergeSourceReads", () => {
  it("merges spellings of one page under one key; the first read gives the link and fills gaps from later ones", () => {
    const { sources, unreadable } = mergeSourceReads([
      { url: "http://Example.org/report/?utm_source=x" },
      { url: "https://example.org/report#intro", extract: "the figure is 12%" },
      {
        url: "https://example.org:443/report",
        extract: "later",
        contentDigest: `SHA256:${DIGEST.toUpperCase()}`,
      },
      { url: "https://doi.org/10.1000/ABC" },
      { url: "doi:10.1000/abc", title: "Paper" },
    ]);
    expect(unreadable).toEqual([]);
    expect(sources).toEqual([
      {
        key: "https://example.org/report",
        kind: "url",
        href: "http://example.org/report",
        title: null,
        extract: "the figure is 12%",
        contentDigest: `sha256:${DIGEST}`,
      },
      {
        key: "doi:10.1000/abc",
        kind: "doi",
        href: "https://doi.org/10.1000/abc",
        title: "Paper",
        extract: null,
        contentDigest: null,
      },
    ]);
  });

  it("returns reads that name no page or carry a malformed digest as unreadable", () => {
    const bad = [{ url: "not a link" }, { url: "https://example.org", contentDigest: "md5:abc" }];
    expect(mergeSourceReads(bad)).toEqual({ sources: [], unreadable: bad });
  });

  it("normalises content digests to sha256:<hex>", () => {
    expect(normalContentDigest(DIGEST)).toBe(`sha256:${DIGEST}`);
    expect(normalContentDigest("sha256:xyz")).toBeUndefined();
  });
});

describe("claims", () => {
  const cite = (sourceKey: string) => ({ sourceKey, quote: null, locator: null });

  it("is unsupported without support, contested with a contradiction, supported otherwise", () => {
    expect(claimStatus({ supports: [], contradicts: [] })).toBe("unsupported");
    expect(claimStatus({ supports: [], contradicts: [cite("a")] })).toBe("unsupported");
    expect(claimStatus({ supports: [cite("a")], contradicts: [cite("b")] })).toBe("contested");
    expect(claimStatus({ supports: [cite("a")], contradicts: [] })).toBe("supported");
  });

  it("orders claims for review: unsupported, contested, supported, each in its own order", () => {
    const claims = [
      { id: 1, supports: [cite("a")], contradicts: [] },
      { id: 2, supports: [cite("a")], contradicts: [cite("b")] },
      { id: 3, supports: [], contradicts: [] },
      { id: 4, supports: [cite("a")], contradicts: [] },
      { id: 5, supports: [], contradicts: [] },
    ];
    expect(claimsForReview(claims).map((c) => c.id)).toEqual([3, 5, 2, 1, 4]);
  });

  it("keys each citation by its source's canonical key, and names citations of unknown or malformed sources", () => {
    const known = new Set(["https://example.org/a", "doi:10.1000/abc"]);
    const { claims, errors } = keyClaims(
      [
        {
          text: "A holds",
          key: true,
          supports: [{ source: "HTTP://example.org/a/", quote: "A is so", locator: "p. 2" }],
          contradicts: [{ source: "DOI:10.1000/ABC" }],
        },
        { text: "B holds", supports: [{ source: "https://never.read/" }, { source: "words" }] },
      ],
      known,
    );
    expect(claims).toEqual([
      {
        text: "A holds",
        key: true,
        supports: [{ sourceKey: "https://example.org/a", quote: "A is so", locator: "p. 2" }],
        contradicts: [{ sourceKey: "doi:10.1000/abc", quote: null, locator: null }],
      },
      { text: "B holds", key: false, supports: [], contradicts: [] },
    ]);
    expect(errors).toEqual([
      'claims[1].supports[0].source: "https://never.read/" is not a source of the plan; report it in webFetches or evidence.sources first',
      'claims[1].supports[1].source: "words" is not a URL, DOI or arXiv id',
    ]);
  });
});
