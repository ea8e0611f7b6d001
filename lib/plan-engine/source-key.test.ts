import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalSourceKey } from "./source-key";

const RUNS = { numRuns: 500 };
const keyOf = (text: string) => canonicalSourceKey(text)?.key;

describe("canonicalSourceKey: pages", () => {
  it("merges scheme, host case, default ports, fragments, tracking parameters and trailing slashes", () => {
    const key = "https://example.org/reports/2024?id=7";
    for (const spelling of [
      "https://example.org/reports/2024?id=7",
      "HTTPS://Example.ORG/reports/2024?id=7",
      "http://example.org/reports/2024?id=7",
      "https://example.org:443/reports/2024?id=7",
      "http://example.org:80/reports/2024?id=7",
      "https://example.org/reports/2024/?id=7",
      "https://example.org/reports/2024?id=7#section-2",
      "https://example.org/reports/2024?utm_source=x&id=7&utm_medium=email",
      "https://example.org/reports/2024?id=7&fbclid=abc&gclid=def&msclkid=g",
      "https://example.org./reports/2024?id=7",
      "  https://example.org/reports/%32024?id=7  ",
    ]) {
      expect(keyOf(spelling), spelling).toBe(key);
    }
  });

  it("keeps what names a different page: path case, other hosts, ports, real parameters", () => {
    const key = keyOf("https://example.org/Page");
    for (const other of [
      "https://example.org/page",
      "https://www.example.org/Page",
      "https://example.org:8443/Page",
      "https://example.org/Page?id=1",
      "https://example.org/Page/more",
    ]) {
      expect(keyOf(other), other).not.toBe(key);
    }
  });

  it("sorts query parameters and decodes unreserved escapes", () => {
    expect(keyOf("https://a.example/x?b=2&a=1")).toBe(keyOf("https://a.example/x?a=1&b=2"));
    expect(keyOf("https://a.example/%7Euser/%61")).toBe("https://a.example/~user/a");
    expect(keyOf("https://a.example/a%2fb")).toBe("https://a.example/a%2Fb");
  });

  it("links to the page over the scheme it was read with", () => {
    expect(canonicalSourceKey("http://Example.org/a/#top")).toEqual({
      kind: "url",
      key: "https://example.org/a",
      href: "http://example.org/a",
    });
  });

  it("refuses what is not a page address", () => {
    for (const text of [
      "",
      "   ",
      "example.org/page",
      "/relative/path",
      "mailto:someone@example.org",
      "ftp://example.org/file",
      "javascript:alert(1)",
      "file:///etc/passwd",
      "some words",
      "https://exa mple.org/",
    ]) {
      expect(canonicalSourceKey(text), text).toBeUndefined();
    }
  });
});

describe("canonicalSourceKey: DOIs", () => {
  it("merges a DOI's usual spellings, case-insensitively", () => {
    for (const spelling of [
      "10.1038/nphys1170",
      "10.1038/NPHYS1170",
      "doi:10.1038/nphys1170",
      "DOI: 10.1038/nphys1170",
      "https://doi.org/10.1038/nphys1170",
      "http://dx.doi.org/10.1038/NPhys1170",
      "https://www.doi.org/10.1038/nphys1170/",
      "https://doi.org/10.1038%2Fnphys1170",
      "https://doi.org/10.1038/nphys1170?utm_source=feed",
    ]) {
      expect(canonicalSourceKey(spelling), spelling).toEqual({
        kind: "doi",
        key: "doi:10.1038/nphys1170",
        href: "https://doi.org/10.1038/nphys1170",
      });
    }
  });

  it("keeps different DOIs apart and refuses a malformed one", () => {
    expect(keyOf("doi:10.1038/nphys1171")).not.toBe(keyOf("doi:10.1038/nphys1170"));
    expect(keyOf("doi:11.1038/x")).toBeUndefined();
    expect(keyOf("doi:10.12/x")).toBeUndefined();
    // A doi.org page that is not a DOI (the resolver's own pages) stays a page.
    expect(keyOf("https://doi.org/the-identifier")).toBe("https://doi.org/the-identifier");
  });
});

describe("canonicalSourceKey: arXiv", () => {
  it("merges abstract and PDF links, versions, the arXiv: prefix and arXiv's DOI", () => {
    for (const spelling of [
      "arXiv:2101.01234",
      "arxiv: 2101.01234v3",
      "https://arxiv.org/abs/2101.01234",
      "https://arxiv.org/abs/2101.01234v2",
      "http://arxiv.org/pdf/2101.01234v2",
      "https://arxiv.org/pdf/2101.01234.pdf",
      "https://www.arxiv.org/abs/2101.01234/",
      "https://export.arxiv.org/abs/2101.01234#refs",
      "doi:10.48550/arXiv.2101.01234",
      "https://doi.org/10.48550/ARXIV.2101.01234",
    ]) {
      expect(canonicalSourceKey(spelling), spelling).toEqual({
        kind: "arxiv",
        key: "arxiv:2101.01234",
        href: "https://arxiv.org/abs/2101.01234",
      });
    }
  });

  it("handles old-style ids and keeps the subject class's case", () => {
    expect(keyOf("arXiv:hep-th/9901001v1")).toBe("arxiv:hep-th/9901001");
    expect(keyOf("https://arxiv.org/abs/HEP-TH/9901001")).toBe("arxiv:hep-th/9901001");
    expect(keyOf("arXiv:math.AG/0309136")).toBe("arxiv:math.AG/0309136");
  });

  it("leaves other arxiv.org pages as pages and refuses a malformed id", () => {
    expect(keyOf("https://arxiv.org/list/cs.AI/recent")).toBe(
      "https://arxiv.org/list/cs.AI/recent",
    );
    expect(keyOf("arXiv:not-an-id")).toBeUndefined();
  });
});

// Generated pages: a host, a path and real parameters, then every spelling
// the rules merge, applied at random.
const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/);
const host = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom("org", "com", "io"))
  .map(([labels, tld]) => [...labels, tld].join("."));
const segment = fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/);
const param = fc.tuple(
  fc
    .stringMatching(/^[a-z][a-z0-9]{0,6}$/)
    .filter((n) => !n.startsWith("utm") && n !== "fbclid" && n !== "gclid"),
  fc.stringMatching(/^[A-Za-z0-9]{0,8}$/),
);
const page = fc.record({
  host,
  path: fc.array(segment, { maxLength: 4 }),
  params: fc.uniqueArray(param, { maxLength: 3, selector: ([name]) => name }),
});
type Page = { host: string; path: string[]; params: [string, string][] };

const plain = (p: Page): string =>
  `https://${p.host}/${p.path.join("/")}${p.params.length ? `?${new URLSearchParams(p.params)}` : ""}`;

const spelling = fc.record({
  http: fc.boolean(),
  upperHost: fc.boolean(),
  port: fc.boolean(),
  slash: fc.boolean(),
  fragment: fc.option(fc.stringMatching(/^[a-z0-9-]{0,8}$/), { nil: undefined }),
  tracking: fc.array(
    fc.tuple(
      fc.constantFrom("utm_source", "utm_campaign", "UTM_Medium", "fbclid", "gclid", "mc_eid"),
      fc.stringMatching(/^[a-z0-9]{1,6}$/),
    ),
    { maxLength: 3 },
  ),
  shuffle: fc.boolean(),
});

const respell = (p: Page, s: typeof spelling extends fc.Arbitrary<infer T> ? T : never): string => {
  const scheme = s.http ? "http" : "https";
  const hostName = s.upperHost ? p.host.toUpperCase() : p.host;
  const port = s.port ? (s.http ? ":80" : ":443") : "";
  const path = `/${p.path.join("/")}${s.slash && p.path.length > 0 ? "/" : ""}`;
  const params = [...p.params, ...s.tracking];
  if (s.shuffle) params.reverse();
  const query = params.length ? `?${new URLSearchParams(params)}` : "";
  const fragment = s.fragment === undefined ? "" : `#${s.fragment}`;
  return `${scheme.toUpperCase()}://${hostName}${port}${path}${query}${fragment}`;
};

describe("canonicalSourceKey: properties", () => {
  it("gives every spelling of a page the key of its plain spelling", () => {
    fc.assert(
      fc.property(page, spelling, (p, s) => {
        expect(keyOf(respell(p, s))).toBe(keyOf(plain(p)));
      }),
      RUNS,
    );
  });

  it("is idempotent: a key read again is the same key", () => {
    fc.assert(
      fc.property(
        fc.oneof(page.map(plain), fc.webUrl({ withQueryParameters: true, withFragments: true })),
        (url) => {
          const first = canonicalSourceKey(url);
          if (first === undefined) return;
          expect(keyOf(first.key)).toBe(first.key);
          expect(keyOf(first.href)).toBe(first.key);
        },
      ),
      RUNS,
    );
  });

  it("keeps pages with different paths or parameters apart", () => {
    fc.assert(
      fc.property(page, page, (a, b) => {
        const same =
          a.host === b.host &&
          a.path.join("/") === b.path.join("/") &&
          JSON.stringify([...a.params].sort()) === JSON.stringify([...b.params].sort());
        expect(keyOf(plain(a)) === keyOf(plain(b))).toBe(same);
      }),
      RUNS,
    );
  });

  it("merges any DOI's spellings and folds its case", () => {
    const doi = fc
      .tuple(
        fc.integer({ min: 1000, max: 999999 }),
        fc.stringMatching(/^[A-Za-z0-9]([A-Za-z0-9.()/_;:-]{0,18}[A-Za-z0-9])?$/),
      )
      .map(([registrant, suffix]) => `10.${registrant}/${suffix}`)
      // A suffix with a "." or ".." path segment has no doi.org link of its own
      // (a link resolves it away, as a browser does), and arXiv's DOIs are arXiv ids.
      .filter((d) => !/^10\.48550\//.test(d) && !/\/\.{1,2}(\/|$)/.test(d));
    fc.assert(
      fc.property(
        doi,
        fc.constantFrom("", "doi:", "DOI: ", "https://doi.org/", "http://dx.doi.org/"),
        fc.boolean(),
        (d, prefix, upper) => {
          const written = `${prefix}${upper ? d.toUpperCase() : d}`;
          expect(canonicalSourceKey(written)).toEqual({
            kind: "doi",
            key: `doi:${d.toLowerCase()}`,
            href: `https://doi.org/${d.toLowerCase()}`,
          });
        },
      ),
      RUNS,
    );
  });

  it("merges any arXiv id's links and versions", () => {
    const id = fc
      .tuple(fc.integer({ min: 701, max: 3012 }), fc.integer({ min: 1, max: 99999 }))
      .map(([yymm, n]) => `${String(yymm).padStart(4, "0")}.${String(n).padStart(5, "0")}`);
    const version = fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined });
    const form = fc.constantFrom(
      (i: string) => `arXiv:${i}`,
      (i: string) => `https://arxiv.org/abs/${i}`,
      (i: string) => `https://arxiv.org/pdf/${i}`,
      (i: string) => `https://arxiv.org/pdf/${i}.pdf`,
    );
    fc.assert(
      fc.property(id, version, form, (i, v, write) => {
        expect(keyOf(write(v === undefined ? i : `${i}v${v}`))).toBe(`arxiv:${i}`);
      }),
      RUNS,
    );
  });

  it("never throws on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const key = canonicalSourceKey(text);
        if (key) expect(["url", "doi", "arxiv"]).toContain(key.kind);
      }),
      RUNS,
    );
  });
});
