import { describe, expect, it, vi } from "vitest";
import { CredentialCache } from "./credential-cache";

describe("CredentialCache", () => {
  const checker = (cache: CredentialCache<string>) => (principal: string) =>
    cache.check("key", async () => ({ principal }));

  it("remembers only while the channel is heard, and forgets at every notification", async () => {
    const cache = new CredentialCache<string>();
    const check = checker(cache);
    expect(await check("a")).toBe("a");
    expect(await check("b")).toBe("b");
    cache.onEvent("listening");
    expect(await check("c")).toBe("c");
    expect(await check("d")).toBe("c");
    cache.onEvent("notified");
    expect(await check("e")).toBe("e");
    cache.onEvent("lost");
    expect(await check("f")).toBe("f");
    expect(await check("g")).toBe("g");
  });

  it("does not remember what was read before its own change's commit", async () => {
    const cache = new CredentialCache<string>();
    const check = checker(cache);
    cache.onEvent("listening");
    expect(await check("before")).toBe("before");
    // This process's own change, told before its commit: forgotten, and what
    // is read until the commit (as it was before) is not remembered.
    vi.useFakeTimers({ now: Date.now(), toFake: ["Date"] });
    try {
      cache.onEvent("changing");
      expect(await check("before")).toBe("before");
      expect(await check("after")).toBe("after");
      // A second on, it remembers again: it stayed heard.
      vi.advanceTimersByTime(1_000);
      expect(await check("later")).toBe("later");
      expect(await check("new")).toBe("later");
    } finally {
      vi.useRealTimers();
    }
  });

  it("does not remember a lookup that a change overlapped", async () => {
    const cache = new CredentialCache<string>();
    cache.onEvent("listening");
    const overlapped = cache.check("key", async () => {
      cache.onEvent("notified");
      return { principal: "old" };
    });
    expect(await overlapped).toBe("old");
    expect(await checker(cache)("new")).toBe("new");
  });
});
