/**
 * Runs before every page: a fresh nonce and the Content-Security-Policy that
 * names it, on the request (Next reads the nonce from there and puts it on the
 * scripts it renders) and on the response. API routes and static files are left
 * out, and prefetches pass once the cross-site check is done: they are not
 * documents. Over HTTPS, pages also get
 * Strict-Transport-Security, decided here at run time because whether Cairn is
 * served over HTTPS is the deployment's (CAIRN_PUBLIC_URL, a trusted proxy:
 * lib/http/request-scheme.ts), not the build's. The fixed security headers are set for every response in next.config.ts.
 */
import { type NextRequest, NextResponse } from "next/server";
import { env } from "@/lib/env";
import { requestScheme } from "@/lib/http/request-scheme";
import { ASKED_PATH_HEADER } from "@/lib/http/return-path";
import { contentSecurityPolicy, HSTS_VALUE, newNonce } from "@/lib/web/security-headers";

/**
 * A server action posted from another site: Next refuses it by throwing, which
 * answers 500 and logs a stack; it is the caller's fault, so 403. The same
 * comparison as Next's: the Origin's host against the forwarded host or Host.
 */
function isCrossSiteAction(request: NextRequest): boolean {
  if (request.method !== "POST" || !request.headers.has("next-action")) return false;
  const origin = request.headers.get("origin");
  if (origin === null) return false;
  const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host");
  return !URL.canParse(origin) || new URL(origin).host !== host;
}

export function proxy(request: NextRequest) {
  if (isCrossSiteAction(request)) {
    return new NextResponse("Forbidden: a form of this site must be sent from this site.", {
      status: 403,
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    });
  }
  // Matched too, so a cross-site action cannot skip the check by calling itself a prefetch.
  if (
    request.headers.has("next-router-prefetch") ||
    request.headers.get("purpose") === "prefetch"
  ) {
    return NextResponse.next();
  }
  const nonce = newNonce();
  const policy = contentSecurityPolicy(nonce, { dev: process.env.NODE_ENV === "development" });
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("x-nonce", nonce);
  // The page asked for, so a visitor sent to sign in comes back to it (set
  // here, over anything a client sent under the same name).
  requestHeaders.set(ASKED_PATH_HEADER, `${request.nextUrl.pathname}${request.nextUrl.search}`);
  requestHeaders.set("Content-Security-Policy", policy);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("Content-Security-Policy", policy);
  const config = env();
  const scheme = requestScheme(request.headers.get("x-forwarded-proto"), {
    publicUrl: config.CAIRN_PUBLIC_URL,
    trustProxy: config.CAIRN_TRUST_PROXY,
  });
  if (scheme === "https") {
    response.headers.set("Strict-Transport-Security", HSTS_VALUE);
  }
  return response;
}

export const config = {
  matcher: ["/((?!api/|_next/static|_next/image|favicon.ico).*)"],
};
