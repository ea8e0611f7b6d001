/**
 * Which names a request may use to reach Cairn, the rule both doors apply (the
 * MCP route's front door, the web door's pages and actions, the OAuth issuer):
 * loopback ones and those of CAIRN_ALLOWED_ORIGINS. A page on another site
 * whose name resolves to this machine (DNS rebinding) sends its own name.
 */
import { env } from "../env";

/** CAIRN_ALLOWED_ORIGINS as a list. */
export function allowedOrigins(): string[] {
  return (env().CAIRN_ALLOWED_ORIGINS ?? "")
    .split(",")
    .map((origin) => origin.trim())
    .filter(Boolean);
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * A Host header as RFC 9110 §7.2 allows it: a name, an IPv4 address or a
 * bracketed IPv6 address, and an optional port; nothing else. A lenient split
 * would read `localhost:1@evil.example` as host `localhost`, and a URL built
 * from it (the OAuth issuer) would then point at `evil.example`.
 */
const HOST_HEADER = /^(?<name>[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

function hostnameOf(hostHeader: string): string | undefined {
  // "[::1]:3000" -> "[::1]", "localhost:3000" -> "localhost"
  return HOST_HEADER.exec(hostHeader)?.groups?.name;
}

/** An Origin header (scheme://host[:port]) that is loopback or one of `origins`. */
export function isAllowedOrigin(origin: string, origins: readonly string[]): boolean {
  if (origins.includes(origin)) return true;
  try {
    const url = new URL(origin);
    return (
      (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_HOSTS.has(url.hostname)
    );
  } catch {
    return false;
  }
}

/** A Host header that names a loopback host or the host of one of `origins`. */
export function isAllowedHost(host: string, origins: readonly string[]): boolean {
  const name = hostnameOf(host.toLowerCase());
  if (name === undefined) return false;
  if (LOOPBACK_HOSTS.has(name)) return true;
  return origins.some((origin) => {
    try {
      return new URL(origin).host.toLowerCase() === host.toLowerCase();
    } catch {
      return false;
    }
  });
}
