import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, newNonce } from "./security-headers";

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
