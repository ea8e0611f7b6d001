import { expect, test } from "@playwright/test";

test("the home page says what Cairn is and links to sign-in and connection instructions", async ({
  page,
}) => {
  await page.goto("/");
  await expect(page).toHaveTitle("Cairn");
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
});
