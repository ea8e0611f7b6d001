/**
 * The escalation chain on /admin (docs/reviews.md, "Escalation chains"): an
 * admin sets a two-level chain, sees it again after a reload and on the
 * team's trail; a level naming someone outside the team is refused with a
 * message that names them, and nothing changes; a review requested after the
 * save carries the chain; emptying every row removes it.
 */
import { sql } from "drizzle-orm";
import { expect, signIn, test } from "./fixtures";
import { awaitingReview } from "./support/reviews";

test("an admin edits the team's escalation chain on /admin", async ({ page, agent, app }) => {
  await signIn(page, app.tenantA.email);
  await page.goto("/admin");
  const form = page.getByTestId("escalation-chain");
  const message = form.getByTestId("action-message");
  const save = form.getByRole("button", { name: "Save escalation chain" });

  await form.getByLabel("Level 1: minutes").fill("30");
  await form.getByLabel("Level 1: hand to").selectOption("people");
  await form.getByLabel("Level 1: people").fill(app.tenantA.researcherEmail);
  await form.getByLabel("Level 2: minutes").fill("120");
  await form.getByLabel("Level 2: counted from").selectOption("request");
  await form.getByLabel("Level 2: hand to").selectOption("admins");
  await save.click();
  await expect(message).toHaveText(
    "Saved: reviews requested from now on escalate through 2 levels while nobody answers.",
  );

  try {
    await page.reload();
    await expect(form.getByLabel("Level 1: minutes")).toHaveValue("30");
    await expect(form.getByLabel("Level 1: people")).toHaveValue(app.tenantA.researcherEmail);
    await expect(form.getByLabel("Level 2: counted from")).toHaveValue("request");
    await expect(form.getByLabel("Level 2: hand to")).toHaveValue("admins");
    await expect(form.getByLabel("Level 3: minutes")).toHaveValue("");
    await expect(page.getByTestId("team-trail-row").first()).toContainText("Escalation chain");

    // Someone of another team: refused by name, the saved chain kept.
    await form.getByLabel("Level 1: people").fill(app.tenantB.email);
    await save.click();
    await expect(message).toContainText(`Level 1: ${app.tenantB.email} is not an active member`);
    // A gap between levels, and a level under a minute's whole number: clear messages.
    await form.getByLabel("Level 1: people").fill(app.tenantA.researcherEmail);
    await form.getByLabel("Level 2: minutes").fill("");
    await form.getByLabel("Level 3: minutes").fill("10");
    await save.click();
    await expect(message).toHaveText(
      "Level 2 is empty while a later level is set: fill the levels in order.",
    );
    await page.reload();
    await expect(form.getByLabel("Level 1: people")).toHaveValue(app.tenantA.researcherEmail);
    await expect(form.getByLabel("Level 2: minutes")).toHaveValue("120");

    // A review requested now carries the chain, its first level 30 minutes after the request.
    const { requested: review } = await awaitingReview(agent, "Escalation chain");
    const handle = await app.openDatabase();
    try {
      const result = (await handle.db.execute(
        sql`select escalation_level as level,
            extract(epoch from escalation_due_at - created_at)::int as after
          from review_request where id = ${review.reviewRequestId}::uuid`,
      )) as unknown as { rows?: unknown[] } | unknown[];
      const rows = Array.isArray(result) ? result : (result.rows ?? []);
      expect(rows).toEqual([{ level: 0, after: 1800 }]);
    } finally {
      await handle.close();
    }
  } finally {
    await page.reload();
    for (const n of [1, 2, 3]) await form.getByLabel(`Level ${n}: minutes`).fill("");
    await save.click();
    await expect(message).toHaveText(
      "Saved: no escalation chain; a review stays with whom it was asked of until its deadline.",
    );
  }
});
