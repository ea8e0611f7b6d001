/**
 * Where a webhook may point. A URL whose host resolves to loopback, a private
 * network, link-local (cloud metadata), unique-local, CGNAT, multicast or an
 * unspecified address is refused unless the tenant allows private webhooks, so
 * an admin cannot make Cairn probe its own network. Checked at registration and
 * again at each delivery, on the very addresses the connection then uses (DNS
 * can change in between).
 */
import "server-only";
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { AppError } from "../../plan-engine/app-error";

const blocked = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  blocked.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["64:ff9b::", 96],
] as const) {
  blocked.addSubnet(network, prefix, "ipv6");
}

/** True for an address a webhook may not reach without the tenant's permission. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, "ipv4");
  if (family !== 6) return true;
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is checked as IPv4.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return blocked.check(mapped[1], "ipv4");
  return blocked.check(address, "ipv6");
}

/** A webhook URL's syntax: http(s), no credentials; http only where private addresses are allowed. */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new AppError("VALIDATION_ERROR", "The webhook URL is not a valid URL.");
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    throw new AppError(
      "VALIDATION_ERROR",
      allowPrivate
        ? "A webhook URL must start with https:// or http://."
        : "A webhook URL must start with https:// (http:// only where private addresses are allowed).",
    );
  }
  if (url.username || url.password) {
    throw new AppError("VALIDATION_ERROR", "A webhook URL may not carry a user name or password.");
  }
  return url;
}

/** The URL host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/**
 * Every address the host resolves to, refused (VALIDATION_ERROR) if one is
 * private and private addresses are not allowed.
 */
export async function resolveWebhookHost(
  host: string,
  allowPrivate: boolean,
): Promise<{ address: string; family: number }[]> {
  let addresses: { address: string; family: number }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw new AppError("VALIDATION_ERROR", `The webhook host ${host} does not resolve.`);
    }
  }
  if (addresses.length === 0) {
    throw new AppError("VALIDATION_ERROR", `The webhook host ${host} does not resolve.`);
  }
  const refused = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
  if (refused) {
    throw new AppError(
      "VALIDATION_ERROR",
      `The webhook host ${host} resolves to ${refused.address}, a loopback or private address. An admin can allow private addresses on the webhooks page.`,
    );
  }
  return addresses;
}

/** The registration check: syntax, then every resolved address. */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  const url = parseWebhookUrl(raw, allowPrivate);
  await resolveWebhookHost(hostOf(url), allowPrivate);
  return url;
}
