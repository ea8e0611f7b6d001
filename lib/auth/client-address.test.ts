import { afterEach, describe, expect, it } from "vitest";
import {
  clientAddressOf,
  normalizeAddress,
  peerAddressHeaderName,
  setPeerAddressHeaderName,
  UNKNOWN_CLIENT_ADDRESS,
} from "./client-address";

const PEER = "x-cairn-peer-test";

describe("client addresses", () => {
  const before = peerAddressHeaderName();
  afterEach(() => setPeerAddressHeaderName(before ?? ""));

  it("normalise IPv4, mapped IPv6, ports and brackets; IPv6 by its /64", () => {
    expect(normalizeAddress(" 203.0.113.7 ")).toBe("203.0.113.7");
    expect(normalizeAddress("203.0.113.7:51234")).toBe("203.0.113.7");
    expect(normalizeAddress("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(normalizeAddress("[2001:db8:0:1::5]:443")).toBe("2001:db8:0:1::/64");
    expect(normalizeAddress("2001:0db8:0000:0001:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:0:1::/64");
    expect(normalizeAddress("::1")).toBe("0:0:0:0::/64");
    expect(normalizeAddress("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(normalizeAddress("not an address")).toBeUndefined();
    expect(normalizeAddress("")).toBeUndefined();
  });

  it("ignore X-Forwarded-For unless a proxy is trusted; use the stamped connection address", () => {
    setPeerAddressHeaderName(PEER);
    const headers = new Headers({ "x-forwarded-for": "198.51.100.1", [PEER]: "127.0.0.1" });
    expect(clientAddressOf(headers, 0)).toBe("127.0.0.1");
    expect(clientAddressOf({ "x-forwarded-for": "198.51.100.1", [PEER]: "10.0.0.3" }, 0)).toBe(
      "10.0.0.3",
    );
  });

  it("behind trusted proxies, take the address the outermost one saw, from the right", () => {
    setPeerAddressHeaderName(PEER);
    // The client wrote "6.6.6.6" itself; the one proxy appended what it saw.
    const one = new Headers({ "x-forwarded-for": "6.6.6.6, 198.51.100.1", [PEER]: "10.0.0.2" });
    expect(clientAddressOf(one, 1)).toBe("198.51.100.1");
    const two = new Headers({ "x-forwarded-for": "6.6.6.6, 198.51.100.1, 10.0.0.9" });
    expect(clientAddressOf(two, 2)).toBe("198.51.100.1");
    // Fewer entries than proxies: the leftmost; none at all: the connection's.
    expect(clientAddressOf(new Headers({ "x-forwarded-for": "198.51.100.1" }), 2)).toBe(
      "198.51.100.1",
    );
    expect(clientAddressOf(new Headers({ [PEER]: "10.0.0.2" }), 1)).toBe("10.0.0.2");
  });

  it("fall back to a constant when nothing tells", () => {
    setPeerAddressHeaderName("");
    expect(clientAddressOf(new Headers({ "x-forwarded-for": "198.51.100.1" }), 0)).toBe(
      UNKNOWN_CLIENT_ADDRESS,
    );
    setPeerAddressHeaderName(PEER);
    expect(clientAddressOf(new Headers({ [PEER]: "garbage" }), 0)).toBe(UNKNOWN_CLIENT_ADDRESS);
  });
});
