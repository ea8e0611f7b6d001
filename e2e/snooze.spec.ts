import type { Page } from "@playwright/test";
import { expect, planAwaitingReview, signIn, test } from "./fixtures";

// "Tomorrow morning" is read on the browser's clock: Tokyo's (UTC+9, no summer time).
test.use({ timezoneId: "Asia/Tokyo" });

/** The navigation's Inbox count. */
async function inboxCount(page: Page): Promise<number> {
  return Number(await page.getByTestId("inbox").locator(".count").innerText());
}

/** Tomorrow 09:00 in Tokyo, as the app writes times: midnight UTC of Tokyo's tomorrow. */
function tomorrowMorningInTokyo(): string {
  const tokyo = new Date(Date.now() + 9 * 3_600_000);
  const tomorrow = new Date(
    Date.UTC(tokyo.getUTCFullYear(), tokyo.getUTCMonth(), tokyo.getUTCDate() + 1),
  );
  return `${tomorrow.toISOString().slice(0, 10)} 00:00`;
}

test("a snoozed review leaves only the snoozer's inbox, shows on their Snoozed view, and comes back on un-snooze", async ({
  page,
  agent,
  app,
  browser,
}) => {
  await planAwaitingReview(agent, "Snooze me");
  await planAwaitingReview(agent, "Keep me");
  await signIn(page, app.tenantA.researcherEmail);
  await page.goto("/inbox");
  const entries = page.getByTestId("inbox-review");
  const snoozeMe = entries.filter({ hasText: "Snooze me" });
  await expect(snoozeMe).toHaveCount(1);
  const before = await inboxCount(page);
  await expect(page.getByTestId("snoozed-view")).toHaveText("Snoozed (0)");

  await snoozeMe.getByLabel("Snooze", { exact: true }).selectOption("tomorrow");
  await snoozeMe.getByRole("button", { name: "Snooze", exact: true }).click();
  await expect(snoozeMe).toHaveCount(0);
  await expect(entries.filter({ hasText: "Keep me" })).toHaveCount(1);
  await expect(page.getByTestId("snoozed-view")).toHaveText("Snoozed (1)");
  await expect.poll(() => inboxCount(page), { timeout: 15_000 }).toBe(before - 1);

  // A colleague still sees it, and their count is untouched.
  const colleague = await browser.newContext({ baseURL: app.url });
  const admin = await colleague.newPage();
  try {
    await signIn(admin, app.tenantA.email);
    await admin.goto("/inbox");
    await expect(admin.getByTestId("inbox-review").filter({ hasText: "Snooze me" })).toHaveCount(1);
    expect(await inboxCount(admin)).toBe(before);
    await expect(admin.getByTestId("snoozed-view")).toHaveText("Snoozed (0)");
  } finally {
    await colleague.close();
  }

  // The Snoozed view: when it comes back (09:00 tomorrow in Tokyo), and Un-snooze.
  await page.getByTestId("snoozed-view").click();
  await expect(page).toHaveURL(/snoozed=1/);
  const snoozed = page.getByTestId("inbox-review").filter({ hasText: "Snooze me" });
  await expect(snoozed.getByTestId("snoozed-until")).toContainText(
    `Snoozed until ${tomorrowMorningInTokyo()}:00 UTC`,
  );
  await expect(page.getByTestId("inbox-review").filter({ hasText: "Keep me" })).toHaveCount(0);
  await snoozed.getByRole("button", { name: "Un-snooze" }).click();
  await expect(snoozed).toHaveCount(0);
  await page.goto("/inbox");
  await expect(snoozeMe).toHaveCount(1);
  await expect(page.getByTestId("snoozed-view")).toHaveText("Snoozed (0)");
  expect(await inboxCount(page)).toBe(before);
});

test("the plan page's review panel snoozes at a chosen time and un-snoozes", async ({
  page,
  agent,
  app,
}) => {
  const plan = await planAwaitingReview(agent, "Snooze from the panel");
  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${plan.planId}`);
  const panel = page.getByTestId("review-panel");
  const snooze = panel.getByTestId("review-snooze");
  await snooze.getByLabel("Snooze", { exact: true }).selectOption("at");
  // A past time is refused, and nothing changes.
  await snooze.getByLabel("Back at").fill("2020-01-01T09:00");
  await snooze.getByRole("button", { name: "Snooze", exact: true }).click();
  await expect(snooze.getByTestId("action-message")).toHaveText(/That time has passed/);
  await expect(snooze.getByTestId("snoozed-until")).toHaveCount(0);

  // Two days on, 14:30 on the Tokyo clock: 05:30 UTC.
  const day = new Date(Date.now() + 9 * 3_600_000 + 2 * 86_400_000).toISOString().slice(0, 10);
  await snooze.getByLabel("Back at").fill(`${day}T14:30`);
  await snooze.getByRole("button", { name: "Snooze", exact: true }).click();
  await expect(snooze.getByTestId("action-message").first()).toHaveText(
    `Snoozed until ${day} 05:30 UTC: it leaves your inbox until then, and your colleagues still see it.`,
  );
  await expect(snooze.getByTestId("snoozed-until")).toContainText(`${day} 05:30:00 UTC`);
  await page.goto("/inbox");
  await expect(
    page.getByTestId("inbox-review").filter({ hasText: "Snooze from the panel" }),
  ).toHaveCount(0);

  await page.goto(`/plans/${plan.planId}`);
  await snooze.getByRole("button", { name: "Un-snooze" }).click();
  await expect(snooze.getByTestId("action-message").last()).toHaveText("Back in your inbox.");
  await expect(snooze.getByTestId("snoozed-until")).toHaveCount(0);
  // On the plan's trail, by the person.
  const trail = (await page.getByTestId("audit-trail").locator("tbody tr").allInnerTexts()).join(
    "\n",
  );
  expect(trail).toContain("user_reviewed · review_snoozed");
  expect(trail).toContain("user_reviewed · review_unsnoozed");
});
