import { describe, expect, it } from "vitest";
import { returnFragment, returnPath, signInPath } from "./return-path";

describe("the path sign-in returns to", () => {
  it("keeps a path on this server with its query", () => {
    expect(returnPath("/plans/0b6e/x?cursor=abc")).toBe("/plans/0b6e/x?cursor=abc");
    expect(signInPath("/plans/0b6e")).toBe("/sign-in?callbackUrl=%2Fplans%2F0b6e");
    expect(signInPath("/plans")).toBe("/sign-in");
    expect(signInPath(null)).toBe("/sign-in");
  });

  it("refuses whatever a browser would read as another origin", () => {
    for (const asked of [
      "//evil.example/x",
      "/\\evil.example/x",
      "/\t/evil.example",
      "/\n/evil.example",
      // Dot segments that the URL parser removes, leaving `//evil.example`.
      "/.//evil.example",
      "/a/..//evil.example",
      "/%2e//evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      "plans",
      "/sign-in?callbackUrl=/plans",
      `/${"a".repeat(2_001)}`,
    ]) {
      expect(returnPath(asked), asked).toBeUndefined();
    }
  });

  it("keeps only a short anchor", () => {
    expect(returnFragment("#review")).toBe("#review");
    expect(returnFragment("#a b")).toBe("");
    expect(returnFragment('#x"><script>')).toBe("");
    expect(returnFragment(undefined)).toBe("");
  });
});
