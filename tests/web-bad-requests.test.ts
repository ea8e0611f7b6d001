/**
 * The web door's answers to requests no form of Cairn's sends (issue 40): a bad
 * or repeated search parameter gets the page's own notice, never a 500; a long
 * URL (8–9 KB) of a signed-in person gets a prompt answer, the page or 414/431,
 * on every kind of page; a server action posted from another site gets 403.
 * On the production build.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppServer, startAppServer } from "./support/app-server";
import { signInOverHttp, type WebSession } from "./support/web-session";

/** How long a prompt answer may take on a shared machine. */
const PROMPT_MS = 5_000;

describe("bad requests to the web door", () => {
  let app: AppServer;
  let admin: WebSession;

  beforeAll(async () => {
    app = await startAppServer("pglite");
    admin = await signInOverHttp(app.url, app.tenantA.email);
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
  });

  it("answers a bad or repeated search parameter with the page's notice", async () => {
    for (const path of [
      "/library?type=Bad-Type",
      "/library?type=a&type=b",
      "/library?q=a&q=b",
      "/library?cursor=a&cursor=b",
      "/plans?cursor=a&cursor=b",
      `/plans/${crypto.randomUUID()}?audit=a&audit=b`,
    ]) {
      const response = await admin.get(path);
      expect(response.status, path).toBeLessThan(500);
    }
    const bad = await admin.get("/library?type=Bad-Type");
    expect(bad.status).toBe(200);
    expect(await bad.text()).toContain("This list cannot be shown");
  }, 60_000);

  it("answers a signed-in request with a long URL promptly", async () => {
    for (const bytes of [8_000, 8_500, 9_000]) {
      for (const path of [
        "/plans",
        "/library",
        "/inbox",
        `/plans/${crypto.randomUUID()}`,
        "/admin",
      ]) {
        const url = `${path}?q=${"a".repeat(bytes - path.length - 3)}`;
        const start = performance.now();
        const response = await admin.get(url);
        await response.arrayBuffer();
        const ms = performance.now() - start;
        expect(ms, `${bytes} bytes to ${path}`).toBeLessThan(PROMPT_MS);
        expect([200, 404, 414, 431], `${bytes} bytes to ${path}`).toContain(response.status);
      }
    }
  }, 120_000);

  it("refuses a server action posted from another site with 403", async () => {
    const planPath = `/plans/${crypto.randomUUID()}`;
    const crossSite = await admin.action(
      planPath,
      "cancelPlanAction",
      { planId: crypto.randomUUID(), reason: "x" },
      { Origin: "https://evil.example" },
    );
    expect(crossSite.status).toBe(403);
    // Calling itself a prefetch does not take it past the check (it once answered Next's 500).
    const prefetches: Record<string, string>[] = [
      { "Next-Router-Prefetch": "1" },
      { Purpose: "prefetch" },
    ];
    for (const prefetch of prefetches) {
      const disguised = await admin.action(
        planPath,
        "cancelPlanAction",
        { planId: crypto.randomUUID(), reason: "x" },
        { Origin: "https://evil.example", ...prefetch },
      );
      expect(disguised.status, JSON.stringify(prefetch)).toBe(403);
    }
    // The same call from Cairn's own origin is not refused as cross-site.
    const sameSite = await admin.action(planPath, "cancelPlanAction", {
      planId: crypto.randomUUID(),
      reason: "x",
    });
    expect(sameSite.status).not.toBe(403);
    expect(sameSite.status).toBeLessThan(500);
  }, 60_000);
});
