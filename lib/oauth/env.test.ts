/** The OAuth settings of lib/env.ts: a clear error for a value Cairn cannot use. */
import { describe, expect, it } from "vitest";
import { parseEnv } from "../env";

describe("OAuth configuration", () => {
  it("takes CAIRN_PUBLIC_URL as an origin", () => {
    expect(parseEnv({ CAIRN_PUBLIC_URL: "https://cairn.example.com/" }).CAIRN_PUBLIC_URL).toBe(
      "https://cairn.example.com",
    );
    expect(parseEnv({ CAIRN_PUBLIC_URL: "http://10.0.0.5:3000" }).CAIRN_PUBLIC_URL).toBe(
      "http://10.0.0.5:3000",
    );
    expect(parseEnv({}).CAIRN_PUBLIC_URL).toBeUndefined();
    expect(parseEnv({ CAIRN_PUBLIC_URL: " " }).CAIRN_PUBLIC_URL).toBeUndefined();
  });

  it("refuses a CAIRN_PUBLIC_URL that is not an http(s) origin, naming it", () => {
    for (const value of [
      "ftp://cairn.example.com",
      "cairn.example.com",
      "https://x.example/cairn",
    ]) {
      expect(() => parseEnv({ CAIRN_PUBLIC_URL: value }), value).toThrow(/CAIRN_PUBLIC_URL/);
    }
  });

  it("allows loopback client metadata documents only when the flag says so", () => {
    expect(parseEnv({}).CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS).toBe(false);
    expect(
      parseEnv({ CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS: "0" })
        .CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS,
    ).toBe(false);
    expect(
      parseEnv({ CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS: "1" })
        .CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS,
    ).toBe(true);
    expect(() => parseEnv({ CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS: "yes" })).toThrow(
      /CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS/,
    );
  });
});
