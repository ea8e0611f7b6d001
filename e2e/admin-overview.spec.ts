import type { Page } from "@playwright/test";
import { expect, keepScreenshot, NOT_FOUND, STALL_SECONDS, signIn, test } from "./fixtures";

const PAGES = [
  { id: "stalled", name: "Stalled plans", href: "/admin/stalled" },
  { id: "tool-calls", name: "Tool calls", href: "/admin/tool-calls" },
  { id: "skills", name: "Skill runs", href: "/admin/skills" },
  { id: "users", name: "Users and API keys", href: "/admin/users" },
];

async function overviewCount(page: Page, id: string): Promise<number> {
  const text = await page
    .getByTestId(`admin-overview-${id}`)
    .getByTestId("admin-overview-count")
    .textContent();
  return Number(text);
}

test("an admin opening /admin sees every admin page with its count", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "Overview stall",
    researchQuestion: "Does the overview count stalled plans?",
    steps: [{ stepType: "search", instructions: "Search, then stop answering." }],
  });
  await agent.ok("get_next_step", { planId: created.planId });
  await agent.fails("get_next_step", { planId: "nope" });
  await new Promise((resolve) => setTimeout(resolve, (STALL_SECONDS + 1) * 1000));

  await signIn(page, app.tenantA.email);
  const response = await page.goto("/admin");
  expect(response?.status()).toBe(200);
  await expect(page.getByRole("heading", { level: 1, name: "Admin" })).toBeVisible();
  const overview = page.getByTestId("admin-overview");
  for (const { id, name, href } of PAGES) {
    const card = page.getByTestId(`admin-overview-${id}`);
    await expect(card.getByRole("link", { name, exact: true })).toHaveAttribute("href", href);
    await expect(card.getByTestId("admin-overview-count")).toHaveText(/^\d+$/);
  }
  await expect(overview.getByRole("link")).toHaveCount(PAGES.length);

  // The agent's calls above are in the last 24 hours, one of them an error.
  expect(await overviewCount(page, "tool-calls")).toBeGreaterThanOrEqual(3);
  await expect(page.getByTestId("admin-overview-tool-calls")).toContainText(
    /calls in the last 24 h, [1-9]\d* errors?/,
  );
  await expect(page.getByTestId("admin-overview-users")).toContainText(/active API keys?/);
  await keepScreenshot(page, "admin-overview");

  // Each count agrees with the page it links to.
  const stalled = await overviewCount(page, "stalled");
  expect(stalled).toBeGreaterThanOrEqual(1);
  await page.getByTestId("admin-overview-stalled").getByRole("link").click();
  await expect(page).toHaveURL(/\/admin\/stalled$/);
  await expect(page.getByTestId("stalled-plan").filter({ hasText: "Overview stall" })).toHaveCount(
    1,
  );
  await expect(page.getByTestId("stalled-plan")).toHaveCount(stalled);

  await page.goto("/admin");
  const users = await overviewCount(page, "users");
  expect(users).toBeGreaterThanOrEqual(2);
  await page.getByTestId("admin-overview-users").getByRole("link").click();
  await expect(page).toHaveURL(/\/admin\/users$/);
  await expect(page.getByTestId("users").locator("tbody tr")).toHaveCount(users);
});

test("a researcher opening /admin gets the admin pages' 404", async ({
  page,
  app,
  allowConsoleError,
}) => {
  await signIn(page, app.tenantA.researcherEmail);
  allowConsoleError(NOT_FOUND);
  const response = await page.goto("/admin");
  expect(response?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1, name: "Not found" })).toBeVisible();
  await expect(page.getByTestId("admin-overview")).toHaveCount(0);
});
