/**
 * Accounts in the browser: sign-in attempt limits, changing one's own password,
 * and what an admin does to other users (role, disable, delete), each checked
 * from the affected user's own open session and, for API keys, over HTTP.
 * Every test works on users it creates, since the server is shared by the specs.
 */
import type { Browser, Page } from "@playwright/test";
import type { AppServer } from "../tests/support/app-server";
import { expect, mcpStatus, planAwaitingReview, signIn, test } from "./fixtures";

const PASSWORD = "a password of their own";
const unique = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

/** The admin page's forms, by their headings. */
function adminForms(page: Page) {
  return {
    user: page.locator("form", { has: page.getByRole("heading", { name: "Add a user" }) }),
    key: page.locator("form", { has: page.getByRole("heading", { name: "Create an API key" }) }),
  };
}

/** Tenant Alpha's admin adds a user in the browser (the admin stays on /admin/users). */
async function addUser(page: Page, email: string, name: string, role = "researcher") {
  await page.goto("/admin/users");
  const { user } = adminForms(page);
  await user.getByLabel("E-mail").fill(email);
  await user.getByLabel("Name").fill(name);
  await user.getByLabel(/Password/).fill(PASSWORD);
  await user.getByLabel("Role").selectOption(role);
  await user.getByRole("button", { name: "Add user" }).click();
  await expect(user.getByTestId("action-message")).toHaveText(`Created ${role} ${email}.`);
}

async function addKey(page: Page, email: string, label: string): Promise<string> {
  const { key } = adminForms(page);
  await key.getByLabel("For user").selectOption(email);
  await key.getByLabel("Label").fill(label);
  await key.getByRole("button", { name: "Create key" }).click();
  return (await page.getByTestId("new-key-value").innerText()).trim();
}

/** A second browser, signed in as someone else: their session stays open meanwhile. */
async function sessionOf(browser: Browser, app: AppServer, email: string, password = PASSWORD) {
  const context = await browser.newContext({ baseURL: app.url });
  const page = await context.newPage();
  await signIn(page, email, password);
  return { page, close: () => context.close() };
}

/** The message of the users table's buttons. */
function usersMessage(page: Page) {
  return page.getByTestId("user-actions").getByTestId("action-message");
}

function userRow(page: Page, email: string) {
  return page.locator(`[data-testid="user-row"][data-email="${email}"]`);
}

async function trySignIn(page: Page, email: string, password: string) {
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** A sign-in that is refused: returns once the form has its answer (React resets the form then). */
async function refusedSignIn(page: Page, email: string, password: string): Promise<string> {
  await trySignIn(page, email, password);
  await expect(page.getByLabel("Password")).toHaveValue("");
  return page.getByTestId("action-message").innerText();
}

test("sign-in refuses a sixth try on an e-mail, saying when to try again, whether or not the account exists", async ({
  page,
  app,
}) => {
  const existing = `locked-${unique()}@example.com`;
  await signIn(page, app.tenantA.email);
  await addUser(page, existing, "Locked Out");
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/sign-in$/);

  const refusals: string[] = [];
  for (const email of [existing, `nobody-${unique()}@example.com`]) {
    await page.goto("/sign-in");
    for (let i = 1; i <= 5; i++) {
      expect(await refusedSignIn(page, email, `wrong guess ${i}`)).toBe(
        "That e-mail and password do not match an account.",
      );
    }
    // The sixth, even with the right password, is not checked.
    const refusal = await refusedSignIn(page, email, PASSWORD);
    expect(refusal).toContain("Too many sign-in attempts");
    expect(refusal).toContain("Try again in 1 minute.");
    refusals.push(refusal);
  }
  expect(refusals[0]).toBe(refusals[1]);
  await expect(page.getByTestId("signed-in-as")).toHaveCount(0);
});

test("a user changes their own password: the current one is needed, and their other sessions end", async ({
  page,
  app,
  browser,
}) => {
  const email = `pat-${unique()}@example.com`;
  await signIn(page, app.tenantA.email);
  await addUser(page, email, "Pat");

  const elsewhere = await sessionOf(browser, app, email);
  const here = await sessionOf(browser, app, email);
  try {
    await here.page.getByRole("link", { name: "Account" }).click();
    await expect(here.page.getByRole("heading", { name: "Your account" })).toBeVisible();
    const form = here.page.locator("form", {
      has: here.page.getByRole("heading", { name: "Change your password" }),
    });
    await form.getByLabel("Current password").fill("not my password");
    await form.getByLabel(/^New password/).fill("a brand new password");
    await form.getByLabel("Confirm the new password").fill("a brand new password");
    await form.getByRole("button", { name: "Change password" }).click();
    await expect(form.getByLabel("Current password")).toHaveValue("");
    await expect(form.getByTestId("action-message")).toHaveText(
      "That is not your current password.",
    );

    await form.getByLabel("Current password").fill(PASSWORD);
    await form.getByLabel(/^New password/).fill("a brand new password");
    await form.getByLabel("Confirm the new password").fill("a brand new password");
    await form.getByRole("button", { name: "Change password" }).click();
    // Ending apps and keys too is ticked by default; this person has none.
    await expect(form.getByLabel(/Also end my connected apps and API keys/)).toBeChecked();
    await expect(form.getByTestId("action-message")).toHaveText(
      "Password changed. Ended: your other sessions, 0 connected apps and 0 API keys.",
    );
    // This session goes on; the other one has ended.
    await here.page.goto("/plans");
    await expect(here.page.getByTestId("signed-in-as")).toContainText(email);
    await elsewhere.page.goto("/plans");
    await expect(elsewhere.page).toHaveURL(/\/sign-in/);

    expect(await refusedSignIn(elsewhere.page, email, PASSWORD)).toBe(
      "That e-mail and password do not match an account.",
    );
    await trySignIn(elsewhere.page, email, "a brand new password");
    await expect(elsewhere.page.getByTestId("signed-in-as")).toContainText(email);
  } finally {
    await elsewhere.close();
    await here.close();
  }
});

test("an admin's role change applies to the user's open session at once", async ({
  page,
  app,
  browser,
}) => {
  const email = `rae-${unique()}@example.com`;
  await signIn(page, app.tenantA.email);
  await addUser(page, email, "Rae");
  const rae = await sessionOf(browser, app, email);
  try {
    expect((await rae.page.goto("/admin/users"))?.status()).toBe(404);

    await userRow(page, email)
      .getByRole("button", { name: `Make admin ${email}` })
      .click();
    await expect(usersMessage(page)).toHaveText(`${email} is now an admin.`);
    await expect(userRow(page, email).getByTestId("user-role")).toHaveText("admin");

    // Same session, no new sign-in: the admin pages open, and the header says admin.
    expect((await rae.page.goto("/admin/users"))?.status()).toBe(200);
    await expect(rae.page.getByTestId("signed-in-as")).toContainText(`${email} · admin`);

    await userRow(page, email)
      .getByRole("button", { name: `Make researcher ${email}` })
      .click();
    await expect(usersMessage(page)).toHaveText(`${email} is now a researcher.`);
    expect((await rae.page.goto("/admin/users"))?.status()).toBe(404);
    // An admin cannot change their own role: their row has no buttons.
    await expect(userRow(page, app.tenantA.email)).toContainText("You");
    await expect(userRow(page, app.tenantA.email).getByRole("button")).toHaveCount(0);
  } finally {
    await rae.close();
  }
});

test("disabling a user ends their session and stops their API key at once; enabling restores the key", async ({
  page,
  app,
  browser,
}) => {
  const email = `dee-${unique()}@example.com`;
  await signIn(page, app.tenantA.email);
  await addUser(page, email, "Dee");
  const key = await addKey(page, email, "Dee's agent");
  expect(await mcpStatus(app, key)).toBe(200);
  const dee = await sessionOf(browser, app, email);
  try {
    await userRow(page, email)
      .getByRole("button", { name: `Disable ${email}` })
      .click();
    await expect(usersMessage(page)).toHaveText(
      `${email} is disabled: signed out everywhere, their connected apps revoked, and their API keys no longer work.`,
    );
    await expect(userRow(page, email).getByTestId("user-status")).toHaveText("Disabled");
    await expect(
      page.getByTestId("api-keys").locator("tr", { hasText: "Dee's agent" }),
    ).toContainText("Refused while its user is disabled");

    expect(await mcpStatus(app, key)).toBe(401);
    await dee.page.goto("/plans");
    await expect(dee.page).toHaveURL(/\/sign-in/);
    expect(await refusedSignIn(dee.page, email, PASSWORD)).toBe(
      "This account is disabled. Ask an admin of your team to enable it.",
    );

    await userRow(page, email)
      .getByRole("button", { name: `Enable ${email}` })
      .click();
    await expect(usersMessage(page)).toHaveText(
      `${email} is enabled: they can sign in again and their API keys work again; revoked connected apps stay revoked.`,
    );
    expect(await mcpStatus(app, key)).toBe(200);
    await trySignIn(dee.page, email, PASSWORD);
    await expect(dee.page.getByTestId("signed-in-as")).toContainText(email);
  } finally {
    await dee.close();
  }
});

test("deleting a user removes them and their key, and the audit trail keeps their name", async ({
  page,
  app,
  agent,
  browser,
}) => {
  const email = `del-${unique()}@example.com`;
  await signIn(page, app.tenantA.email);
  await addUser(page, email, "Del Reviewer");
  const key = await addKey(page, email, "Del's agent");

  // Del answers a checkpoint in the review panel: the trail names them.
  const plan = await planAwaitingReview(agent, `Deletion trail ${unique()}`);
  const del = await sessionOf(browser, app, email);
  try {
    await del.page.goto(`/plans/${plan.planId}`);
    await del.page.getByTestId("review-panel").getByRole("button", { name: "Approve" }).click();
    await expect(del.page.getByTestId("action-message")).toHaveText(/Approved/);

    await page.goto("/admin/users");
    await userRow(page, email)
      .getByRole("button", { name: `Delete ${email}` })
      .click();
    await userRow(page, email)
      .getByRole("button", { name: `Yes, delete ${email}` })
      .click();
    await expect(usersMessage(page)).toHaveText(
      `Deleted ${email} and their API keys. The audit trail keeps their name.`,
    );
    await expect(userRow(page, email)).toHaveCount(0);
    await expect(page.getByTestId("api-keys")).not.toContainText("Del's agent");

    expect(await mcpStatus(app, key)).toBe(401);
    await del.page.goto("/plans");
    await expect(del.page).toHaveURL(/\/sign-in/);

    await page.goto(`/plans/${plan.planId}`);
    await expect(page.getByTestId("audit-trail")).toContainText(`Del Reviewer <${email}>`);
  } finally {
    await del.close();
  }
});
