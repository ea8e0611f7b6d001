/**
 * The browser's side of the security headers: every page names a fresh nonce in
 * its Content-Security-Policy and Next's scripts carry it (so the pages still
 * work, with no violation reported), a deliverable's Markdown image from another
 * host is never requested, and no other site can frame Cairn.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "@playwright/test";
import { expect, expectHydrated, NOT_FOUND, planAwaitingReview, signIn, test } from "./fixtures";

type Violation = { directive: string; blockedURI: string };

/** Collects the CSP violations of every document the page loads: the DOM events and the console's reports. */
async function watchCsp(page: Page) {
  const console: string[] = [];
  const events: Violation[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) console.push(message.text());
  });
  await page.exposeFunction("__reportCsp", (violation: Violation) => {
    events.push(violation);
  });
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      (window as unknown as { __reportCsp: (v: Violation) => void }).__reportCsp({
        directive: event.violatedDirective,
        blockedURI: event.blockedURI,
      });
    });
  });
  return { console, events: async () => [...events] };
}

/** A server on another port (so another origin) that counts what it is asked for. */
async function otherOrigin(body = "") {
  const hits: string[] = [];
  const server: Server = createServer((request, response) => {
    hits.push(request.url ?? "");
    if (request.url === "/frame") {
      response.writeHead(200, { "Content-Type": "text/html" });
      response.end(body);
      return;
    }
    response.writeHead(200, { "Content-Type": "image/gif" });
    response.end(Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const directives = (policy: string) =>
  new Map(
    policy.split(";").map((part) => {
      const [name = "", ...values] = part.trim().split(/\s+/);
      return [name, values] as const;
    }),
  );

test("pages carry a nonce-based CSP and the security headers, and work under them", async ({
  page,
  agent,
  app,
  allowConsoleError,
}) => {
  // The walk ends on a plan that does not exist.
  allowConsoleError(NOT_FOUND);
  const csp = await watchCsp(page);
  const response = await page.goto("/sign-in");
  const headers = response?.headers() ?? {};
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
  expect(headers["x-frame-options"]).toBe("DENY");
  expect(headers["permissions-policy"]).toContain("camera=()");
  const policy = directives(headers["content-security-policy"] ?? "");
  expect(policy.get("default-src")).toEqual(["'self'"]);
  expect(policy.get("img-src")).toEqual(["'self'", "data:"]);
  expect(policy.get("frame-ancestors")).toEqual(["'none'"]);
  expect(policy.get("object-src")).toEqual(["'none'"]);
  expect(policy.get("base-uri")).toEqual(["'self'"]);
  expect(policy.get("form-action")).toEqual(["'self'"]);
  const scriptSrc = policy.get("script-src") ?? [];
  expect(scriptSrc).not.toContain("'unsafe-inline'");
  expect(scriptSrc).not.toContain("'unsafe-eval'");
  const nonce = scriptSrc.find((v) => v.startsWith("'nonce-"))?.slice(7, -1);
  expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);

  // Every script of the page is Next's, with this request's nonce.
  const scriptNonces = await page.evaluate(() =>
    [...document.scripts].map((script) => script.nonce),
  );
  expect(scriptNonces.length).toBeGreaterThan(0);
  expect(new Set(scriptNonces)).toEqual(new Set([nonce]));
  await expectHydrated(page);

  // A fresh nonce per request.
  const again = await page.request.get("/sign-in");
  expect(again.headers()["content-security-policy"]).not.toContain(`'nonce-${nonce}'`);

  // API routes: the fixed headers and a policy that allows nothing.
  const mcp = await page.request.get("/api/mcp");
  expect(mcp.headers()["x-content-type-options"]).toBe("nosniff");
  expect(mcp.headers()["content-security-policy"]).toBe(
    "default-src 'none'; frame-ancestors 'none'",
  );

  // Signing in, the plan page and the review buttons work, and nothing is refused.
  const plan = await planAwaitingReview(agent, "Policy check");
  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${plan.planId}`);
  await expectHydrated(page);
  const panel = page.getByTestId("review-panel");
  // Refused in the page itself: client code runs.
  await panel.getByRole("button", { name: "Modify with feedback" }).click();
  await expect(panel.getByRole("alert")).toContainText("Write the feedback");
  await panel.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(/Approved/);
  for (const path of ["/plans", "/library", "/connect", "/", "/plans/no-such-plan"]) {
    await page.goto(path);
    await expectHydrated(page);
  }
  // The admin's forms, too.
  await page.context().clearCookies();
  await signIn(page, app.tenantA.email);
  for (const path of ["/admin", "/admin/users", "/admin/stalled", "/admin/tool-calls"]) {
    await page.goto(path);
    await expectHydrated(page);
  }
  expect(await csp.events()).toEqual([]);
  expect(csp.console).toEqual([]);
});

test("a deliverable's image from another host is never requested", async ({
  page,
  agent,
  app,
  allowConsoleError,
}) => {
  // What this test checks: the browser refuses the injected image and says so.
  allowConsoleError(/violates the following Content Security Policy directive: "img-src/);
  const tracker = await otherOrigin();
  try {
    const created = await agent.ok("create_research_plan", {
      name: "Beacon in the report",
      researchQuestion: "Does opening the plan call anyone?",
      steps: [{ stepType: "search", instructions: "Search." }],
    });
    const pixel = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
    await agent.ok("store_research_output", {
      planId: created.planId,
      outputMediaType: "markdown",
      content: `# Report\n\n![beacon](${tracker.url}/beacon.gif)\n\n![inline dot](${pixel})\n\nThe end.`,
    });

    const csp = await watchCsp(page);
    const requested: string[] = [];
    const refused: string[] = [];
    page.on("request", (request) => {
      if (request.url().startsWith(tracker.url)) requested.push(request.url());
    });
    page.on("requestfailed", (request) => {
      if (request.url().startsWith(tracker.url)) {
        refused.push(`${request.url()} ${request.failure()?.errorText}`);
      }
    });
    await signIn(page, app.tenantA.researcherEmail);
    await page.goto(`/plans/${created.planId}`);
    const deliverable = page.getByTestId("deliverable");
    await expect(deliverable).toContainText("The end.");
    // The renderer names the external image instead of loading it; the data: image shows.
    await expect(page.getByTestId("blocked-image")).toHaveText(
      "[Image not shown: it is hosted elsewhere (beacon)]",
    );
    await expect(deliverable.locator(`img[src^="${tracker.url}"]`)).toHaveCount(0);
    const dot = deliverable.getByRole("img", { name: "inline dot" });
    await expect(dot).toBeVisible();
    expect(await dot.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
    expect(await csp.events()).toEqual([]);
    // The page never even asked for it.
    expect(requested).toEqual([]);

    // Defence in depth: an external image that reached the page anyway is refused by the CSP.
    await page.evaluate((src) => {
      const img = document.createElement("img");
      img.src = src;
      document.body.append(img);
    }, `${tracker.url}/injected.gif`);
    await expect
      .poll(async () => (await csp.events()).map((v) => `${v.directive} ${v.blockedURI}`))
      .toEqual([`img-src ${tracker.url}/injected.gif`]);
    await expect.poll(() => refused).toEqual([`${tracker.url}/injected.gif csp`]);
    // Neither image reached the other host.
    expect(tracker.hits).toEqual([]);
  } finally {
    await tracker.close();
  }
});

test("another site cannot frame Cairn's pages", async ({ page, app, allowConsoleError }) => {
  // What this test checks: the browser refuses the frame and says so.
  allowConsoleError(/frame-ancestors 'none'/);
  const site = await otherOrigin(`<iframe id="victim" src="${app.url}/sign-in"></iframe>`);
  const refusals: string[] = [];
  page.on("console", (message) => {
    if (message.text().includes("frame-ancestors")) refusals.push(message.text());
  });
  try {
    const framed = page.waitForResponse((r) => r.url() === `${app.url}/sign-in`);
    await page.goto(`${site.url}/frame`);
    expect((await framed).status()).toBe(200);
    // The browser refuses to show it, naming the policy; the form never appears in the frame.
    await expect.poll(() => refusals.length).toBeGreaterThan(0);
    expect(refusals[0]).toContain(`Framing '${app.url}/' violates`);
    const inner = page.locator("#victim").contentFrame().locator("input[name=email]");
    await expect(inner).toHaveCount(0);
  } finally {
    await site.close();
  }
});
