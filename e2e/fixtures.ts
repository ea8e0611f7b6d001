/**
 * Playwright fixtures: a Cairn server per worker over a fresh, seeded PostgreSQL
 * database (two tenants, each with an admin, a researcher and an API key), an
 * agent (the official MCP SDK client with tenant Alpha's key), and page helpers.
 */
import { mkdirSync } from "node:fs";
import { test as base, expect, type Page } from "@playwright/test";
import { type AppServer, SEED_PASSWORD, startAppServer } from "../tests/support/app-server";
import { type Agent, connectAgent, postMcp, report } from "../tests/support/mcp-client";

export const STALL_SECONDS = 3;

type WorkerFixtures = { app: AppServer };
type ConsoleFixtures = {
  /**
   * Watches the page's console: the test fails on any console error or uncaught
   * page error (a hydration mismatch, a 404 a page loads), except those a test
   * provokes on purpose and names with this function where it provokes them.
   */
  allowConsoleError: (pattern: RegExp) => void;
};
type TestFixtures = { agent: Agent };

/** Playwright's test with the page's console watched: every spec starts from this one. */
export const watchedTest = base.extend<ConsoleFixtures>({
  allowConsoleError: [
    async ({ page }, use) => {
      const errors: string[] = [];
      const allowed: RegExp[] = [];
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(`${message.text()} at ${page.url()}`);
      });
      page.on("pageerror", (error) => errors.push(`${error.message} at ${page.url()}`));
      await use((pattern) => {
        allowed.push(pattern);
      });
      const unexpected = errors.filter((error) => !allowed.some((pattern) => pattern.test(error)));
      expect(unexpected, "errors in the browser console").toEqual([]);
    },
    { auto: true },
  ],
});

/** The console's line for a page or resource answered 404, which a test may ask for on purpose. */
export const NOT_FOUND = /status of 404 \(Not Found\)/;

export const test = watchedTest.extend<TestFixtures, WorkerFixtures>({
  app: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright fixtures must destructure their dependencies, here none
    async ({}, use) => {
      const app = await startAppServer("postgres", {
        stallThresholdSeconds: STALL_SECONDS,
        env: {
          // Review deadlines in the tests are seconds long (e2e/inbox.spec.ts).
          CAIRN_SCHEDULER_INTERVAL_MS: "500",
          // The operator lets webhooks reach the test's receiver on 127.0.0.1 (e2e/webhooks.spec.ts).
          CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES: "127.0.0.1",
        },
      });
      await use(app);
      await app.stop();
    },
    { scope: "worker", timeout: 120_000 },
  ],
  baseURL: async ({ app }, use) => {
    await use(app.url);
  },
  agent: async ({ app }, use) => {
    const agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    await use(agent);
    await agent.close();
  },
});

export { expect, report };

/** Next's bootstrap ran: the page is hydrated, not just server HTML. */
export async function expectHydrated(page: Page) {
  await expect
    .poll(() =>
      page.evaluate(() => typeof (window as { next?: { version?: string } }).next?.version),
    )
    .toBe("string");
}

export async function signIn(page: Page, email: string, password = SEED_PASSWORD) {
  await page.goto("/sign-in");
  await submitSignIn(page, email, password);
  await expect(page.getByTestId("signed-in-as")).toContainText(email);
}

/** Fills and sends the sign-in form the browser is on (sent there by a page asked for signed out). */
export async function submitSignIn(page: Page, email: string, password = SEED_PASSWORD) {
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Keeps a full-page screenshot of a main page as a test artifact. */
export async function keepScreenshot(page: Page, name: string) {
  mkdirSync("test-results/screenshots", { recursive: true });
  await page.screenshot({ path: `test-results/screenshots/${name}.png`, fullPage: true });
}

/** An agent's plan paused at a checkpoint on its first step (with `proposedResult`, if given). */
export async function planAwaitingReview(
  agent: Agent,
  name: string,
  proposedResult?: Record<string, unknown>,
) {
  const created = await agent.ok("create_research_plan", {
    name,
    researchQuestion: `What should we know about ${name}?`,
    steps: [
      { stepType: "checkpoint", instructions: "Present the sources found so far for review." },
      { stepType: "synthesize", instructions: "Write the answer." },
    ],
  });
  const next = await agent.ok("get_next_step", { planId: created.planId });
  const review = await agent.ok("request_user_review", {
    planId: created.planId,
    stepId: next.step.stepId,
    summary: `Found 4 sources on ${name}. Should I go deeper on costs?`,
    questions: ["Include 2024 prices?"],
    proposedResult,
  });
  return {
    planId: created.planId as string,
    stepId: next.step.stepId as string,
    reviewRequestId: review.reviewRequestId as string,
    secondStepId: created.steps[1].stepId as string,
  };
}

/** The HTTP status of one MCP message (an initialize unless given) sent with this key or token. */
export async function mcpStatus(
  app: AppServer,
  token: string,
  message?: Parameters<typeof postMcp>[2],
): Promise<number> {
  const response = await postMcp(app.mcpUrl, token, message);
  await response.body?.cancel();
  return response.status;
}
