/**
 * Which addresses are not the public internet: loopback, private networks,
 * link-local (cloud metadata), unique-local, CGNAT, NAT64, 6to4, IPv4-compatible,
 * benchmark, multicast, reserved and unspecified. One list for every place where a URL someone else
 * supplied makes Cairn connect out (OAuth client metadata documents, webhooks),
 * so that nobody can make Cairn probe its own network.
 */
import { BlockList, isIP } from "node:net";

const NON_PUBLIC = new BlockList();
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
  // Multicast (224/4) and reserved (240/4).
  ["224.0.0.0", 3],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  // The unspecified and loopback addresses, and the deprecated IPv4-compatible
  // ones (::a.b.c.d, RFC 4291 §2.5.5.1) around them, which some stacks still
  // route to the IPv4 address inside.
  ["::", 96],
  // NAT64 (well-known and local-use prefixes): the gateway connects to the
  // IPv4 address inside, which may be a private one.
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  // 6to4 (RFC 3056, deprecated): a relay reaches the IPv4 address in bits 16-48.
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, "ipv6");
}
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are not listed: BlockList would
// match that subnet against every IPv4 address. The IPv4 inside is checked instead.
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Whether an address is not public; anything that is not an IP address counts as not public. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, "ipv4");
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return NON_PUBLIC.check(mapped[1], "ipv4");
  return NON_PUBLIC.check(address, "ipv6");
}

export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? "ipv4" : "ipv6");
}
