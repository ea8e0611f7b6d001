import { connectAgent } from "../tests/support/mcp-client";
import { expect, keepScreenshot, mcpStatus, signIn, test } from "./fixtures";

test("a key created in the UI works with the MCP route and stops at once when revoked", async ({
  page,
  app,
}) => {
  await signIn(page, app.tenantA.email);
  await page.getByRole("link", { name: "Users & keys" }).click();

  const userForm = page.locator("form", { has: page.getByRole("heading", { name: "Add a user" }) });
  await userForm.getByLabel("E-mail").fill("new-researcher@example.com");
  await userForm.getByLabel(/Password/).fill("another long password");
  await userForm.getByRole("button", { name: "Add user" }).click();
  await expect(userForm.getByTestId("action-message")).toHaveText(
    "Created researcher new-researcher@example.com.",
  );
  await expect(page.getByTestId("users")).toContainText("new-researcher@example.com");

  const keyForm = page.locator("form", {
    has: page.getByRole("heading", { name: "Create an API key" }),
  });
  await keyForm.getByLabel("For user").selectOption("new-researcher@example.com");
  await keyForm.getByLabel("Label").fill("Browser-made key");
  await keyForm.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("new-key-value").innerText()).trim();
  expect(key).toMatch(/^cairn_[A-Za-z0-9_-]{43}$/);
  await expect(page.getByTestId("snippet-claude")).toContainText(
    `claude mcp add --transport http cairn ${app.url}/api/mcp`,
  );
  await expect(page.getByTestId("snippet-json")).toContainText(`"Authorization": "Bearer ${key}"`);
  await expect(page.getByTestId("snippet-inspector")).toContainText("--method tools/list");
  await keepScreenshot(page, "admin-users-keys");

  const agent = await connectAgent(app.mcpUrl, key);
  expect(await agent.ok("ping")).toMatchObject({ ok: true });
  const created = await agent.ok("create_research_plan", {
    name: "Made with a browser key",
    researchQuestion: "q",
    steps: [{ stepType: "search", instructions: "s" }],
  });
  await agent.close();

  const row = page.getByTestId("api-keys").locator("tr", { hasText: "Browser-made key" });
  await row.getByRole("button", { name: /Revoke/ }).click();
  await expect(row).toContainText("Revoked");

  expect(
    await mcpStatus(app, key, {
      method: "tools/call",
      params: { name: "get_plan_status", arguments: { planId: created.planId } },
    }),
  ).toBe(401);
});

test("adding a user whose e-mail is taken says where: in this team or in another one", async ({
  page,
  app,
}) => {
  await signIn(page, app.tenantA.email);
  await page.goto("/admin/users");
  const userForm = page.locator("form", { has: page.getByRole("heading", { name: "Add a user" }) });
  const add = async (email: string) => {
    await userForm.getByLabel("E-mail").fill(email);
    await userForm.getByLabel(/Password/).fill("another long password");
    await userForm.getByRole("button", { name: "Add user" }).click();
  };

  // Beta's admin, in other letters: the admin cannot see Beta's users, so the page says why.
  await add(app.tenantB.email.toUpperCase());
  await expect(userForm.getByTestId("action-message")).toHaveText(
    `${app.tenantB.email} already belongs to an account in another team. An e-mail address signs in to one team only, so it cannot be added here: use a different address.`,
  );
  await expect(page.getByTestId("users")).not.toContainText(app.tenantB.email);

  await add(app.tenantA.researcherEmail);
  await expect(userForm.getByTestId("action-message")).toHaveText(
    `${app.tenantA.researcherEmail} is already a user of this team.`,
  );
});
