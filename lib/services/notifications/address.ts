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
import { isIP } from "node:net";
import { isNonPublicAddress } from "../../http/non-public-address";
import { AppError } from "../../plan-engine/app-error";

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
  const refused = allowPrivate ? undefined : addresses.find((a) => isNonPublicAddress(a.address));
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
