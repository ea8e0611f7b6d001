/**
 * The browser-facing security headers. Pages get a Content-Security-Policy with a
 * fresh nonce per request (set by proxy.ts; Next reads the nonce from the request's
 * CSP header and puts it on its own scripts), so only Next's scripts run: no
 * 'unsafe-inline' for scripts, 'strict-dynamic' for the chunks they load. Every
 * response, pages, API routes and static files alike, gets the fixed headers
 * (next.config.ts).
 */

/**
 * The page policy. Images only from Cairn itself or data: URLs, so a deliverable's
 * Markdown cannot make the browser call another host (a tracking beacon); no
 * framing (clickjacking of the admin forms); forms post only to Cairn.
 *
 * Style attributes stay allowed (`style-src-attr`): the plan page's flow and
 * timeline set sizes inline, and an attribute cannot run script or, with
 * img-src as it is, load anything from elsewhere. Style elements need 'self'
 * or the nonce.
 */
export function contentSecurityPolicy(nonce: string, { dev = false } = {}): string {
  return [
    "default-src 'self'",
    // React needs eval only in development, for its error overlays.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    // In development Next injects styles without a nonce (and a nonce would void 'unsafe-inline').
    `style-src 'self' ${dev ? "'unsafe-inline'" : `'nonce-${nonce}'`}`,
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** For responses that are not pages (API routes): nothing to load, nothing to frame. */
export const NON_PAGE_CSP = "default-src 'none'; frame-ancestors 'none'";

/** Headers on every response. */
export const SECURITY_HEADERS: { key: string; value: string }[] = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  { key: "X-Frame-Options", value: "DENY" },
  // Cairn uses none of these; the clipboard (copy buttons) stays available.
  {
    key: "Permissions-Policy",
    value: "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
  },
];

/**
 * HTTP Strict Transport Security, for a response served over HTTPS: from then
 * on the browser goes to this host over HTTPS only, so nobody on the network
 * can strip TLS from a later visit and read a session cookie. Only over HTTPS
 * (a browser ignores it on http://, and a plain-http install must stay
 * reachable). A year, the host only: other names under the same domain are
 * not Cairn's to decide.
 */
export const HSTS_VALUE = "max-age=31536000";

/** A fresh, unguessable nonce (128 random bits, base64). */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}
