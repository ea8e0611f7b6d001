/**
 * Which client a request comes from, for the per-address attempt limits of
 * sign-in and set-up.
 *
 * - Behind reverse proxies (CAIRN_TRUST_PROXY = how many of them append to
 *   X-Forwarded-For): the address the outermost trusted proxy saw, counted from
 *   the right of X-Forwarded-For, so a value the client wrote itself is never used.
 * - Otherwise: the address of the connection. Next.js passes it on only as
 *   X-Forwarded-For, and only when the client sent none, so it cannot be told
 *   from a forged one; instead the server stamps every request with the socket's
 *   address under a header whose name is random per process
 *   (lib/peer-address.ts, installed at start), which no client can forge.
 * - When neither is known (a request that reached the server before it finished
 *   starting, a test calling a service): the constant "local".
 *
 * IPv4-mapped IPv6 addresses count as their IPv4 address, and IPv6 addresses by
 * their /64 network, since one host usually holds a whole /64.
 */
import { isIPv4, isIPv6 } from "node:net";

export const UNKNOWN_CLIENT_ADDRESS = "local";

const globalForPeer = globalThis as typeof globalThis & { __cairnPeerHeader?: string };

/** The per-process name of the header carrying the connection's address, once installed. */
export function peerAddressHeaderName(): string | undefined {
  return globalForPeer.__cairnPeerHeader;
}

export function setPeerAddressHeaderName(name: string): void {
  globalForPeer.__cairnPeerHeader = name;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function headerOf(headers: HeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(",") : value;
}

function expandIPv6(address: string): string[] {
  const [head = "", tail = ""] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = address.includes("::") ? (tail ? tail.split(":") : []) : [];
  const fill = address.includes("::") ? 8 - left.length - right.length : 0;
  return [...left, ...Array<string>(Math.max(fill, 0)).fill("0"), ...right].map((part) =>
    part.toLowerCase().replace(/^0+(?=.)/, ""),
  );
}

/** A normalised address (see above), or undefined when the text is not an IP address. */
export function normalizeAddress(raw: string): string | undefined {
  let text = raw.trim();
  // "[::1]:3000" and "1.2.3.4:5678", as some proxies write them.
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed?.[1]) text = bracketed[1];
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(":"));
  text = text.replace(/%.*$/, ""); // zone index (fe80::1%eth0)
  if (isIPv4(text)) return text;
  if (!isIPv6(text)) return undefined;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(text);
  if (mapped?.[1] && isIPv4(mapped[1])) return mapped[1];
  if (text.includes(".")) return text.toLowerCase(); // other embedded-IPv4 forms: as written
  return `${expandIPv6(text).slice(0, 4).join(":")}::/64`;
}

/** The client address of a request, by the rules above. */
export function clientAddressOf(headers: HeaderSource, trustProxy: number): string {
  if (trustProxy > 0) {
    const hops = (headerOf(headers, "x-forwarded-for") ?? "")
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean);
    const seen = hops[Math.max(0, hops.length - trustProxy)];
    const address = seen === undefined ? undefined : normalizeAddress(seen);
    if (address) return address;
  }
  const peerHeader = peerAddressHeaderName();
  const peer = peerHeader ? headerOf(headers, peerHeader) : undefined;
  return (peer && normalizeAddress(peer)) || UNKNOWN_CLIENT_ADDRESS;
}
