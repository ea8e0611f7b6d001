import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, newNonce, servedOverHttps } from "./security-headers";

const directives = (policy: string) =>
  new Map(
    policy.split(";").map((part) => {
      const [name = "", ...values] = part.trim().split(/\s+/);
      return [name, values] as const;
    }),
  );

describe("contentSecurityPolicy", () => {
  it("lets only the nonce's scripts run in production, and no eval", () => {
    const policy = directives(contentSecurityPolicy("abc123=="));
    expect(policy.get("script-src")).toEqual(["'self'", "'nonce-abc123=='", "'strict-dynamic'"]);
    expect(policy.get("style-src")).toEqual(["'self'", "'nonce-abc123=='"]);
    expect(policy.get("img-src")).toEqual(["'self'", "data:"]);
    expect(policy.get("frame-ancestors")).toEqual(["'none'"]);
    expect(policy.get("object-src")).toEqual(["'none'"]);
    expect(policy.get("default-src")).toEqual(["'self'"]);
    expect(policy.get("base-uri")).toEqual(["'self'"]);
    expect(policy.get("form-action")).toEqual(["'self'"]);
  });

  it("adds eval for React's development overlays only in development", () => {
    expect(directives(contentSecurityPolicy("n", { dev: true })).get("script-src")).toContain(
      "'unsafe-eval'",
    );
  });
});

describe("newNonce", () => {
  it("is 128 random bits, different each time", () => {
    const nonces = new Set(Array.from({ length: 100 }, newNonce));
    expect(nonces.size).toBe(100);
    for (const nonce of nonces) expect(Buffer.from(nonce, "base64")).toHaveLength(16);
  });
});

describe("Strict-Transport-Security", () => {
  const plain = { protocol: "http:", forwardedProto: null, publicUrl: undefined, trustProxy: 0 };

  it("is sent when Cairn is reached over HTTPS, directly or behind a TLS proxy", () => {
    expect(servedOverHttps({ ...plain, protocol: "https:" })).toBe(true);
    expect(servedOverHttps({ ...plain, publicUrl: "https://cairn.example.com" })).toBe(true);
    expect(servedOverHttps({ ...plain, forwardedProto: "https", trustProxy: 1 })).toBe(true);
  });

  it("is not sent over plain http, nor on an untrusted X-Forwarded-Proto", () => {
    expect(servedOverHttps(plain)).toBe(false);
    expect(servedOverHttps({ ...plain, publicUrl: "http://10.0.0.5:3000" })).toBe(false);
    expect(servedOverHttps({ ...plain, forwardedProto: "https" })).toBe(false);
    expect(servedOverHttps({ ...plain, forwardedProto: "http", trustProxy: 1 })).toBe(false);
  });
});
