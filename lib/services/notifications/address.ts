/**
 * Where a webhook may point. A URL whose host resolves to loopback, a private
 * network, link-local (cloud metadata), unique-local, CGNAT, multicast or an
 * unspecified address is refused, unless the operator listed that network in
 * CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES (docs/operations.md): no tenant can make
 * Cairn probe the network it runs in. Checked at registration and again at each
 * delivery, on the very addresses the connection then uses (DNS can change in
 * between). A refusal is the same sentence whether the name did not resolve or
 * resolved to a refused address, and names neither: those go to the server log,
 * so the answer cannot be used to map that network.
 */
import "server-only";
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import type { CidrRange } from "../../env";
import { isNonPublicAddress } from "../../http/non-public-address";
import { logWarning } from "../../log";
import { AppError } from "../../plan-engine/app-error";

/** The operator's allowed private networks, as a BlockList (no list: none). */
export function privateRangeList(ranges: readonly CidrRange[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) list.addSubnet(range.network, range.prefix, range.family);
  return list;
}

/** Whether Cairn may connect to an address: a public one, or one in an allowed private range. */
export function isAllowedDestination(address: string, allowed: BlockList): boolean {
  if (!isNonPublicAddress(address)) return true;
  const family = isIP(address);
  return family !== 0 && allowed.check(address, family === 4 ? "ipv4" : "ipv6");
}

/**
 * The one refusal for an address Cairn will not or cannot reach: whether the
 * name resolved, and to what, stays in the server log, or the answer would
 * tell a team which names exist inside the network Cairn runs in.
 */
export const ADDRESS_REFUSAL =
  "Refused: the webhook address is not allowed or could not be reached (loopback and private networks are reached only where the operator allows them with CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES).";

/**
 * A webhook URL's syntax: https, or http where the operator allows private
 * networks (a receiver inside them rarely has a certificate); no credentials.
 */
export function parseWebhookUrl(raw: string, privateAllowed: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new AppError("VALIDATION_ERROR", "The webhook URL is not a valid URL.");
  }
  if (url.protocol !== "https:" && !(privateAllowed && url.protocol === "http:")) {
    throw new AppError(
      "VALIDATION_ERROR",
      privateAllowed
        ? "A webhook URL must start with https:// or http://."
        : "A webhook URL must start with https://.",
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
 * Every address the host resolves to, refused (VALIDATION_ERROR) if one is not
 * an allowed destination.
 */
export async function resolveWebhookHost(
  host: string,
  allowed: BlockList,
): Promise<{ address: string; family: number }[]> {
  let addresses: { address: string; family: number }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (error) {
      logWarning(`Webhook host ${host} refused: it does not resolve`, error);
      throw new AppError("VALIDATION_ERROR", ADDRESS_REFUSAL);
    }
  }
  const refused = addresses.find((a) => !isAllowedDestination(a.address, allowed));
  if (addresses.length === 0 || refused) {
    logWarning(
      `Webhook host ${host} refused: ${refused ? `it resolves to ${refused.address}, outside the public addresses and the allowed private ranges` : "it resolves to no address"}`,
    );
    throw new AppError("VALIDATION_ERROR", ADDRESS_REFUSAL);
  }
  return addresses;
}

/** The registration check: syntax, then every resolved address. */
export async function checkWebhookUrl(raw: string, ranges: readonly CidrRange[]): Promise<URL> {
  const url = parseWebhookUrl(raw, ranges.length > 0);
  await resolveWebhookHost(hostOf(url), privateRangeList(ranges));
  return url;
}
