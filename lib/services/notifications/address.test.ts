import { describe, expect, it } from "vitest";
import { isNonPublicAddress } from "../../http/non-public-address";
import { parseWebhookUrl, resolveWebhookHost } from "./address";

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

  it("wants https unless private addresses are allowed, and no credentials", () => {
    expect(() => parseWebhookUrl("http://example.com/hook", false)).toThrow(/https/);
    expect(parseWebhookUrl("http://example.com/hook", true).href).toBe("http://example.com/hook");
    expect(() => parseWebhookUrl("ftp://example.com", true)).toThrow(/https/);
    expect(() => parseWebhookUrl("https://user:pw@example.com", false)).toThrow(/password/);
    expect(() => parseWebhookUrl("not a url", false)).toThrow(/valid URL/);
  });

  it("refuses a name or literal that resolves to a private address", async () => {
    await expect(resolveWebhookHost("127.0.0.1", false)).rejects.toThrow(/private/);
    await expect(resolveWebhookHost("localhost", false)).rejects.toThrow(/private/);
    await expect(resolveWebhookHost("127.0.0.1", true)).resolves.toEqual([
      { address: "127.0.0.1", family: 4 },
    ]);
  });
});
