/**
 * A source's canonical key: the one spelling under which every way of writing
 * the same page, DOI or arXiv paper merges into one source of a plan
 * (docs/evidence.md, "Canonical keys").
 */

export type SourceKind = "url" | "doi" | "arxiv";

export interface SourceKey {
  readonly kind: SourceKind;
  /** `https://host/path?query` for a page, `doi:10.…` (lower case), `arxiv:<id>` (no version). */
  readonly key: string;
  /** A link a person can open: the page itself, `https://doi.org/…`, `https://arxiv.org/abs/…`. */
  readonly href: string;
}

/** Query parameters that only say how a reader arrived, never which page they read. */
const TRACKING_PARAMS = new Set([
  "fbclid",
  "gclid",
  "gclsrc",
  "dclid",
  "gbraid",
  "wbraid",
  "msclkid",
  "yclid",
  "twclid",
  "igshid",
  "mc_cid",
  "mc_eid",
  "_ga",
  "_gl",
  "_hsenc",
  "_hsmi",
  "mkt_tok",
  "vero_id",
  "oly_anon_id",
  "oly_enc_id",
  "rb_clickid",
  "s_cid",
  "ref_src",
]);

const isTrackingParam = (name: string): boolean => {
  const lower = name.toLowerCase();
  return lower.startsWith("utm_") || TRACKING_PARAMS.has(lower);
};

/** `10.<registrant>/<suffix>`; the suffix may hold any printable character but space. */
const DOI = /^10\.\d{4,9}\/\S+$/;
const DOI_PREFIX = /^doi:\s*/i;
const DOI_HOSTS = new Set(["doi.org", "dx.doi.org", "www.doi.org"]);

/** New-style (`2101.01234`, `0704.0001`) and old-style (`hep-th/9901001`, `math.AG/0309136`) ids. */
const ARXIV_ID = /^(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?\/\d{7})(?:v\d+)?$/i;
const ARXIV_PREFIX = /^arxiv:\s*/i;
const ARXIV_HOSTS = new Set(["arxiv.org", "www.arxiv.org", "export.arxiv.org"]);
/** arXiv's own DOIs (`10.48550/arXiv.2101.01234`) name the paper, so they merge with its id. */
const ARXIV_DOI = /^10\.48550\/arxiv\.(.+)$/i;

const doiKey = (doi: string): SourceKey => {
  const arxiv = ARXIV_DOI.exec(doi)?.[1];
  const asArxiv = arxiv === undefined ? undefined : arxivKey(arxiv);
  if (asArxiv) return asArxiv;
  // DOIs are case-insensitive (ASCII), so lower case is the key's one spelling.
  const lower = doi.toLowerCase();
  return { kind: "doi", key: `doi:${lower}`, href: `https://doi.org/${lower}` };
};

const arxivKey = (raw: string): SourceKey | undefined => {
  const id = raw.replace(/\.pdf$/i, "");
  if (!ARXIV_ID.test(id)) return undefined;
  const unversioned = id.replace(/v\d+$/i, "");
  // New-style ids are digits only; an old-style archive name is lower case and
  // its subject class upper case, so only the archive part is folded.
  const slash = unversioned.indexOf("/");
  const normal =
    slash < 0
      ? unversioned
      : `${unversioned.slice(0, slash).replace(/^[a-z-]+/i, (a) => a.toLowerCase())}${unversioned.slice(slash)}`;
  return { kind: "arxiv", key: `arxiv:${normal}`, href: `https://arxiv.org/abs/${normal}` };
};

/**
 * `text` without the slashes it ends with. Not `/\/+$/`: a regular expression
 * engine retries that from every slash, so a path of many slashes not at the end
 * took minutes (quadratic).
 */
const withoutTrailingSlashes = (text: string): string => {
  let end = text.length;
  while (end > 0 && text[end - 1] === "/") end--;
  return text.slice(0, end);
};

const safeDecode = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/** A DOI or arXiv id spelt as a link to its resolver, or undefined for any other page. */
function identifierFromUrl(url: URL): SourceKey | undefined {
  const host = url.hostname.replace(/\.$/, "");
  const path = safeDecode(url.pathname).replace(/^\/+/, "");
  if (DOI_HOSTS.has(host)) {
    const doi = withoutTrailingSlashes(path);
    return DOI.test(doi) ? doiKey(doi) : undefined;
  }
  if (ARXIV_HOSTS.has(host)) {
    const match = /^(?:abs|pdf)\/(.+?)\/?$/.exec(path);
    return match?.[1] === undefined ? undefined : arxivKey(match[1]);
  }
  return undefined;
}

/** Unreserved characters written as %XX are the same URL as the characters themselves (RFC 3986, 6.2.2.2). */
const decodeUnreserved = (text: string): string =>
  text.replace(/%([0-9A-Fa-f]{2})/g, (written, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(char) ? char : written.toUpperCase();
  });

function pageKey(url: URL): SourceKey {
  const host = url.hostname.replace(/\.$/, "");
  const port = url.port === "" ? "" : `:${url.port}`;
  const path = withoutTrailingSlashes(decodeUnreserved(url.pathname));
  const params = [...url.searchParams.entries()]
    .filter(([name]) => !isTrackingParam(name))
    .sort(([a, av], [b, bv]) => (a === b ? compare(av, bv) : compare(a, b)));
  const query = params.length === 0 ? "" : `?${new URLSearchParams(params).toString()}`;
  const rest = `${host}${port}${path}${query}`;
  // http and https name the same page for a reader; the key keeps one of them,
  // the link the scheme the agent read it over.
  return { kind: "url", key: `https://${rest}`, href: `${url.protocol}//${rest}` };
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The canonical key of a page address, a DOI or an arXiv id in any of their
 * usual spellings; undefined when the text is none of them (a relative link, a
 * `mailto:`, prose).
 */
export function canonicalSourceKey(text: string): SourceKey | undefined {
  const trimmed = text.trim();
  if (trimmed === "" || /\s/.test(trimmed.replace(DOI_PREFIX, "").replace(ARXIV_PREFIX, ""))) {
    return undefined;
  }
  if (DOI_PREFIX.test(trimmed)) {
    const doi = trimmed.replace(DOI_PREFIX, "");
    return DOI.test(doi) ? doiKey(doi) : undefined;
  }
  if (ARXIV_PREFIX.test(trimmed)) return arxivKey(trimmed.replace(ARXIV_PREFIX, ""));
  if (DOI.test(trimmed)) return doiKey(trimmed);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.hostname === "") return undefined;
  return identifierFromUrl(url) ?? pageKey(url);
}

/**
 * A link to the source a canonical key names: a claim's citation carries the
 * key alone, and its link is made from it rather than copied from the source's row.
 */
export function hrefOfSourceKey(key: string): string {
  if (key.startsWith("doi:")) return `https://doi.org/${key.slice(4)}`;
  if (key.startsWith("arxiv:")) return `https://arxiv.org/abs/${key.slice(6)}`;
  return key;
}
