/**
 * Where sign-in returns a person to: the page they asked for when they were
 * sent to sign in (a link from an e-mail, a chat or the review card opens
 * `/plans/<id>#review`). Only a path on this server: anything that a browser
 * would read as another origin (`//host`, `/\host`, a tab or newline that the
 * URL parser drops) is refused, so the query string cannot make an open redirect.
 */

/** The request header the proxy sets to the path a page was asked at. */
export const ASKED_PATH_HEADER = "x-cairn-asked-path";

const BASE = "http://cairn.invalid";
const MAX_RETURN_PATH = 2_000;

/** `asked` as a path on this server to return to, or undefined. */
export function returnPath(asked: string | null | undefined): string | undefined {
  if (!asked || asked.length > MAX_RETURN_PATH || !asked.startsWith("/")) return undefined;
  if (asked.startsWith("//") || asked.includes("\\")) return undefined;
  let url: URL;
  try {
    url = new URL(asked, BASE);
  } catch {
    return undefined;
  }
  // Dot segments are resolved by the parse (`/.//host` is `//host`), so the
  // result is checked again: a path that starts `//` reads as another origin.
  if (url.origin !== BASE || url.pathname === "/sign-in" || url.pathname.startsWith("//")) {
    return undefined;
  }
  return `${url.pathname}${url.search}`;
}

/** A page's anchor (`#review`) kept across sign-in: a short id, nothing else. */
export function returnFragment(hash: string | null | undefined): string {
  return hash && /^#[A-Za-z0-9_-]{1,64}$/.test(hash) ? hash : "";
}

/** The sign-in page's address that returns to `asked` (the plans list when there is none). */
export function signInPath(asked: string | null | undefined): string {
  const back = returnPath(asked);
  return back && back !== "/plans"
    ? `/sign-in?callbackUrl=${encodeURIComponent(back)}`
    : "/sign-in";
}
