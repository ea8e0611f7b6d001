import { expect, test } from "./fixtures";

test("the home page says what Cairn is and links to sign-in and connection instructions", async ({
  page,
}) => {
  await page.goto("/");
  await expect(page).toHaveTitle("Cairn");
  // Every page's tab has Cairn's icon (browsers ask for it on every page).
  const icon = await page.request.get("/favicon.ico");
  expect(icon.status()).toBe(200);
  expect(icon.headers()["content-type"]).toContain("image/");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(
    "Research plans that survive the session",
  );
  await expect(page.getByText(/MCP client/).first()).toBeVisible();
  await expect(page.getByRole("link", { name: "Sign in" }).first()).toHaveAttribute(
    "href",
    "/sign-in",
  );

  await page.getByRole("link", { name: "How to connect" }).click();
  await expect(page).toHaveURL(/\/connect$/);
  await expect(page.getByRole("heading", { name: "Connect an AI platform" })).toBeVisible();
  await expect(page.getByText("Authorization: Bearer").first()).toBeVisible();

  await page.getByRole("link", { name: "Sign in" }).first().click();
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
});

test("Connect copies each snippet, says to stop the embedded server before the CLI, and explains the Inspector's OAuth message", async ({
  page,
}) => {
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.goto("/connect");
  for (const [label, testId] of [
    ["Create a key on the server", "snippet-create-key"],
    ["Claude Code", "snippet-claude"],
    ["Any MCP client (JSON configuration)", "snippet-json"],
    ["MCP Inspector (command line)", "snippet-inspector"],
  ] as const) {
    await page.getByRole("button", { name: `Copy ${label}` }).click();
    await expect(page.getByRole("button", { name: `Copied ${label}` })).toBeVisible();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await page.getByTestId(testId).innerText());
  }
  await expect(page.getByText("stop the server first")).toBeVisible();
  await expect(page.getByText("Interactive OAuth requires a TTY")).toBeVisible();
});

test("a wrong password gets a clear error and no session", async ({ page, app }) => {
  await page.goto("/sign-in");
  await page.getByLabel("E-mail").fill(app.tenantA.email);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(
    "That e-mail and password do not match an account.",
  );
  const response = await page.goto("/plans");
  expect(page.url()).toContain("/sign-in");
  expect(response?.ok()).toBe(true);
});
