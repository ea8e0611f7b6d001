/**
 * The team's rules on /admin (docs/reviews.md, "The team's trail"): an admin
 * chooses which connected apps' in-client answers and card decisions count,
 * from the team's own connected apps, each shown with whether it counts; and
 * every change to the rules (who decides, the review deadline, the trusted
 * apps) appears in "Changes to the team's rules", newest first, naming who
 * changed what from what to what; a save that changes nothing adds no row.
 */
import { sql } from "drizzle-orm";
import { expect, keepScreenshot, signIn, test } from "./fixtures";

const CLIENT_ID = "e2e-trusted-client";

test("an admin trusts one connected app, and each change to the rules is in the team's trail", async ({
  page,
  app,
}) => {
  // A person of the team connected an app (the consent flow itself is e2e/oauth.spec.ts).
  const handle = await app.openDatabase();
  try {
    await handle.db.execute(sql`
      with client as (
        insert into oauth_client (client_id, kind, client_name, redirect_uris)
        values (${CLIENT_ID}, 'registered', 'Claude Desktop', '["http://127.0.0.1:9/cb"]'::jsonb)
        returning id
      )
      insert into oauth_grant (tenant_id, user_id, client_id, resource, scope)
      select ${app.tenantA.tenantId}::uuid, ${app.tenantA.userId}::uuid, client.id, ${app.mcpUrl}, 'mcp'
      from client`);
  } finally {
    await handle.close();
  }

  await signIn(page, app.tenantA.email);
  await page.goto("/admin");
  const trusted = page.getByTestId("trusted-clients-form");
  const trail = page.getByTestId("team-trail-row");
  const rowsBefore = await trail.count();
  await expect(trusted.getByLabel(/No app named/)).toBeChecked();
  const app1 = trusted.getByRole("checkbox", { name: /Claude Desktop/ });
  await expect(trusted.getByTestId("trusted-clients-list")).toContainText(
    `Claude Desktop ${CLIENT_ID}`,
  );
  await expect(app1).not.toBeChecked();

  try {
    await trusted.getByLabel(/Only these apps/).check();
    await app1.check();
    await trusted.getByRole("button", { name: "Save trusted apps" }).click();
    await expect(trusted.getByTestId("action-message")).toHaveText(
      "Saved: in-client answers count only from this app.",
    );
    // Named, the app counts as its person in cards and in-client answers, whatever the policy.
    await expect(
      trusted.getByTestId("trusted-client").filter({ hasText: "Claude Desktop" }),
    ).toContainText("counts as its person in cards and in-client answers");
    await expect(page.getByTestId("card-hosts")).toContainText("Claude, ChatGPT, VS Code");
    await expect(trail).toHaveCount(rowsBefore + 1);
    await expect(trail.first()).toContainText("alpha@example.com");
    await expect(trail.first()).toContainText("In-client answers count from");
    await expect(trail.first()).toContainText("every connected app");
    await expect(trail.first()).toContainText(`only Claude Desktop (${CLIENT_ID})`);

    const defaults = page.getByTestId("review-defaults");
    await defaults.getByLabel(/Deadline in minutes/).fill("30");
    await defaults.getByLabel("When it passes").selectOption("escalate");
    await defaults.getByRole("button", { name: "Save review defaults" }).click();
    await expect(defaults.getByTestId("action-message")).toContainText("30 min");
    await expect(trail).toHaveCount(rowsBefore + 2);
    await expect(trail.first()).toContainText("Review deadline");
    await expect(trail.first()).toContainText("no deadline");
    await expect(trail.first()).toContainText("30 min, then hand to the admins");

    // Saving what is already set changes nothing and records nothing.
    await page.reload();
    await expect(trusted.getByRole("checkbox", { name: /Claude Desktop/ })).toBeChecked();
    await trusted.getByRole("button", { name: "Save trusted apps" }).click();
    await expect(trusted.getByTestId("action-message")).toHaveText(
      "Saved: in-client answers count only from this app.",
    );
    await expect(trail).toHaveCount(rowsBefore + 2);
    await keepScreenshot(page, "admin-team-rules");
  } finally {
    await page.goto("/admin");
    await trusted.getByLabel(/No app named/).check();
    await trusted.getByRole("button", { name: "Save trusted apps" }).click();
    await expect(trusted.getByTestId("action-message")).toContainText("every app");
    const defaults = page.getByTestId("review-defaults");
    await defaults.getByLabel(/Deadline in minutes/).fill("");
    await defaults.getByLabel("When it passes").selectOption("");
    await defaults.getByRole("button", { name: "Save review defaults" }).click();
    await expect(defaults.getByTestId("action-message")).toContainText(
      "wait until someone answers",
    );
  }
  await expect(trail).toHaveCount(rowsBefore + 4);
  await expect(trail.first()).toContainText("30 min, then hand to the admins");
  await expect(trail.nth(1)).toContainText(`only Claude Desktop (${CLIENT_ID})`);
});
