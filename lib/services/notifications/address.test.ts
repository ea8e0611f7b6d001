import { describe, expect, it } from "vitest";
import { parseEnv } from "../../env";
import { isNonPublicAddress } from "../../http/non-public-address";
import {
  ADDRESS_REFUSAL,
  isAllowedDestination,
  parseWebhookUrl,
  privateRangeList,
  resolveWebhookHost,
} from "./address";

describe("webhook addresses", () => {
  it("calls loopback, private, link-local, CGNAT, multicast and unspecified addresses private", () => {
    for (const address of [
      "127.0.0.1",
      "10.0.0.5",
      "172.16.3.4",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "::1",
      "::",
      "fd00::1",
      "fe80::1",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:10.1.2.3",
      "::127.0.0.1",
      "::169.254.169.254",
      "::7f00:1",
      "2002:7f00:1::1",
      "2002:a9fe:a9fe::",
      "64:ff9b::a00:1",
      "64:ff9b:1::a00:1",
      "not an address",
    ]) {
      expect(isNonPublicAddress(address), address).toBe(true);
    }
  });

  it("lets public addresses through", () => {
    for (const address of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::1111"]) {
      expect(isNonPublicAddress(address), address).toBe(false);
    }
  });

  it("wants https unless the operator allows private networks, and no credentials", () => {
    expect(() => parseWebhookUrl("http://example.com/hook", false)).toThrow(/https/);
    expect(parseWebhookUrl("http://example.com/hook", true).href).toBe("http://example.com/hook");
    expect(() => parseWebhookUrl("ftp://example.com", true)).toThrow(/https/);
    expect(() => parseWebhookUrl("https://user:pw@example.com", false)).toThrow(/password/);
    expect(() => parseWebhookUrl("not a url", false)).toThrow(/valid URL/);
  });

  it("refuses a private address outside the operator's ranges, without naming it", async () => {
    const none = privateRangeList([]);
    const loopback = privateRangeList(
      parseEnv({ CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES: "127.0.0.0/8" })
        .CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES,
    );
    for (const host of ["127.0.0.1", "localhost", "169.254.169.254", "::7f00:1"]) {
      const refusal = resolveWebhookHost(host, none);
      await expect(refusal, host).rejects.toThrow(ADDRESS_REFUSAL);
      await expect(refusal, host).rejects.not.toThrow(/127\.0\.0\.1|169\.254/);
    }
    // A name that does not resolve gets the very same answer: the two cannot be told apart.
    await expect(resolveWebhookHost("no-such-host.invalid", none)).rejects.toThrow(ADDRESS_REFUSAL);
    await expect(resolveWebhookHost("127.0.0.1", loopback)).resolves.toEqual([
      { address: "127.0.0.1", family: 4 },
    ]);
    // Another private network stays refused.
    await expect(resolveWebhookHost("10.0.0.1", loopback)).rejects.toThrow(/^Refused/);
    expect(isAllowedDestination("93.184.216.34", none)).toBe(true);
  });

  it("reads CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES as CIDR ranges, none by default", () => {
    expect(parseEnv({}).CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES).toEqual([]);
    expect(
      parseEnv({ CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES: "10.0.0.0/8, fd00::/8,192.168.1.20" })
        .CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES,
    ).toEqual([
      { network: "10.0.0.0", prefix: 8, family: "ipv4" },
      { network: "fd00::", prefix: 8, family: "ipv6" },
      { network: "192.168.1.20", prefix: 32, family: "ipv4" },
    ]);
    for (const value of ["10.0.0.0/33", "yes", "10.0.0.0/8/1", "example.com/8", "10.0.0.0/"]) {
      expect(() => parseEnv({ CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES: value }), value).toThrow(
        /CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES/,
      );
    }
  });
});
