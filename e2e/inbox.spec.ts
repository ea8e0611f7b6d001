import type { Agent } from "../tests/support/mcp-client";
import { expect, keepScreenshot, report, signIn, test } from "./fixtures";

/** A plan whose first step waits for a review with the given options. */
async function askForReview(agent: Agent, name: string, options: Record<string, unknown> = {}) {
  const created = await agent.ok("create_research_plan", {
    name,
    researchQuestion: `What about ${name}?`,
    steps: [
      { stepType: "checkpoint", instructions: "Show the sources." },
      { stepType: "synthesize", instructions: "Write the answer." },
    ],
  });
  const next = await agent.ok("get_next_step", { planId: created.planId });
  const review = await agent.ok("request_user_review", {
    planId: created.planId,
    stepId: next.step.stepId,
    summary: `Sources on ${name}: please check.`,
    questions: [`Is ${name} in scope?`],
    ...options,
  });
  return {
    planId: created.planId as string,
    stepId: next.step.stepId as string,
    secondStepId: created.steps[1].stepId as string,
    review,
  };
}

test("the inbox lists pending reviews oldest first; take, hand off and answer from it", async ({
  page,
  agent,
  app,
}) => {
  const older = await askForReview(agent, "Inbox older", { assignTo: app.tenantA.researcherEmail });
  await askForReview(agent, "Inbox newer", { deadlineSeconds: 3600, onTimeout: "escalate" });
  await signIn(page, app.tenantA.researcherEmail);

  await page.getByTestId("inbox").click();
  await expect(page).toHaveURL(/\/inbox$/);
  const entries = page.getByTestId("inbox-review");
  const olderEntry = entries.filter({ hasText: "Inbox older" });
  const newerEntry = entries.filter({ hasText: "Inbox newer" });
  await expect(olderEntry.getByTestId("review-assignee")).toHaveText(
    /alpha-researcher@example.com/,
  );
  await expect(olderEntry).toContainText("Sources on Inbox older: please check.");
  await expect(olderEntry).toContainText("Is Inbox older in scope?");
  await expect(olderEntry.getByTestId("review-waiting")).toContainText("waiting");
  await expect(newerEntry.getByTestId("review-assignee")).toHaveText("the team");
  await expect(newerEntry.getByTestId("review-deadline")).toContainText(
    "then it goes to the admins",
  );
  // Oldest first.
  const names = await entries.locator("h2 a").allInnerTexts();
  expect(names.indexOf("Inbox older")).toBeLessThan(names.indexOf("Inbox newer"));
  await keepScreenshot(page, "inbox");

  // "Assigned to me" shows the older one only, until the researcher takes the newer one.
  await page.getByLabel("Assigned to me").check();
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/mine=1/);
  await expect(olderEntry).toBeVisible();
  await expect(newerEntry).toHaveCount(0);
  await page.goto("/inbox");
  await newerEntry.getByRole("button", { name: "Assign to me" }).click();
  await expect(newerEntry.getByTestId("assign-message")).toHaveText("Assigned to you.");
  await expect(newerEntry.getByTestId("review-assignee")).toHaveText(
    /alpha-researcher@example.com/,
  );
  await page.goto("/inbox?mine=1");
  await expect(newerEntry).toBeVisible();

  // Hand it over to the admin with a note (it leaves "assigned to me"), then back to the team.
  await page.goto("/inbox");
  await newerEntry
    .getByLabel("Hand off to")
    .selectOption({ label: `Alpha Admin <${app.tenantA.email}>` });
  await newerEntry.getByLabel("Note").fill("You know this source best.");
  await newerEntry.getByRole("button", { name: "Hand off" }).click();
  await expect(newerEntry.getByTestId("assign-message")).toHaveText(
    `Handed over to ${app.tenantA.email}, who has been notified.`,
  );
  await page.goto("/inbox");
  await newerEntry.getByLabel("Hand off to").selectOption("team");
  await newerEntry.getByRole("button", { name: "Hand off" }).click();
  await expect(newerEntry.getByTestId("assign-message")).toHaveText(/Handed back to the team/);
  await expect(newerEntry.getByTestId("review-assignee")).toHaveText("the team");

  // Answer the older one from the inbox: it leaves the list and the agent moves on.
  await olderEntry.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(/Approved/);
  await expect(olderEntry).toHaveCount(0);
  const next = await agent.ok("get_next_step", { planId: older.planId });
  expect(next.step.stepId).toBe(older.secondStepId);

  // The plan's audit trail names who decided; the hand-offs are recorded on theirs.
  await page.goto(`/plans/${older.planId}`);
  const audit = (await page.getByTestId("audit-trail").locator("tbody tr").allInnerTexts()).join(
    "\n",
  );
  expect(audit).toContain("user_reviewed · decision");
  expect(audit).toContain("alpha-researcher@example.com");
  await page.goto("/inbox");
  await newerEntry.getByRole("link", { name: "Inbox newer" }).click();
  // The link navigates on the client: read the trail once the plan's page shows it.
  await expect(page.getByTestId("audit-trail")).toBeVisible();
  const trail = (await page.getByTestId("audit-trail").locator("tbody tr").allInnerTexts()).join(
    "\n",
  );
  expect(trail.match(/user_reviewed · review_assigned/g)).toHaveLength(3);
  // The plan page's panel offers the same take and hand-off.
  await expect(page.getByTestId("review-panel").getByTestId("review-assignment")).toBeVisible();
});

test("nobody answers: Cairn skips the step at the deadline and the agent continues", async ({
  page,
  agent,
  app,
}) => {
  await signIn(page, app.tenantA.researcherEmail);
  const plan = await askForReview(agent, "Deadline skip", {
    deadlineSeconds: 20,
    onTimeout: "skip",
  });
  expect(plan.review.onTimeout).toBe("skip");
  await page.goto("/inbox");
  const entry = page.getByTestId("inbox-review").filter({ hasText: "Deadline skip" });
  await expect(entry.getByTestId("review-deadline")).toContainText("then Cairn skips the step");

  // The server's scheduler applies the deadline; the inbox refreshes itself.
  await expect(entry).toHaveCount(0, { timeout: 45_000 });
  const next = await agent.ok("get_next_step", { planId: plan.planId });
  expect(next.status).toBe("ready");
  expect(next.step.stepId).toBe(plan.secondStepId);
  expect(next.reviewTimedOut).toMatchObject({ action: "skip", stepId: plan.stepId });
  expect(next.reviewTimedOut.reason).toContain("Cairn skipped the step");

  await page.goto(`/plans/${plan.planId}`);
  await expect(page.getByTestId("step-1").getByTestId("status")).toHaveText("Skipped");
  const audit = (await page.getByTestId("audit-trail").locator("tbody tr").allInnerTexts()).join(
    "\n",
  );
  expect(audit).toContain("user_reviewed · decision");
  expect(audit).toContain("Cairn (deadline)");
  await agent.ok("submit_step_result", {
    planId: plan.planId,
    stepId: plan.secondStepId,
    result: { answer: "done" },
    stepExecutionReport: report,
  });
  expect((await agent.ok("get_next_step", { planId: plan.planId })).status).toBe("plan_complete");
});

test("an admin sets the team's default deadline, which a review without its own gets", async ({
  page,
  agent,
  app,
}) => {
  await signIn(page, app.tenantA.email);
  await page.goto("/admin");
  const form = page.getByTestId("review-defaults");
  await form.getByLabel(/Deadline in minutes/).fill("30");
  await form.getByLabel("When it passes").selectOption("escalate");
  await form.getByRole("button", { name: "Save review defaults" }).click();
  await expect(form.getByTestId("action-message")).toContainText("30 min");
  try {
    const plan = await askForReview(agent, "Team default");
    expect(plan.review.onTimeout).toBe("escalate");
    expect(Date.parse(plan.review.dueAt) - Date.now()).toBeGreaterThan(25 * 60 * 1000);
  } finally {
    await form.getByLabel(/Deadline in minutes/).fill("");
    await form.getByLabel("When it passes").selectOption("");
    await form.getByRole("button", { name: "Save review defaults" }).click();
    await expect(form.getByTestId("action-message")).toContainText("wait until someone answers");
  }
  // Both parts or neither.
  await form.getByLabel(/Deadline in minutes/).fill("10");
  await form.getByRole("button", { name: "Save review defaults" }).click();
  await expect(form.getByTestId("action-message")).toContainText("give both a deadline");
});

test("the inbox shows a page of reviews at a time, with the next page after the last", async ({
  page,
  agent,
  app,
}) => {
  // One more than a page, on top of whatever the other tests left pending.
  const count = 21;
  const planIds: string[] = [];
  for (let i = 0; i < count; i += 1) {
    planIds.push((await askForReview(agent, `Paged ${String(i).padStart(2, "0")}`)).planId);
  }
  await signIn(page, app.tenantA.email);
  await page.goto("/inbox");
  const entries = page.getByTestId("inbox-review");
  await expect(entries).toHaveCount(20);
  await expect(page.getByTestId("inbox-shown")).toHaveText(/^20 of the \d+ pending reviews$/);
  const seen: string[] = [];
  let pages = 1;
  for (;;) {
    const names = await entries.locator("h2 a").allInnerTexts();
    expect(names.length).toBeLessThanOrEqual(20);
    seen.push(...names.filter((name) => name.startsWith("Paged ")));
    const next = page.getByTestId("inbox-next");
    if ((await next.count()) === 0) break;
    const before = names[names.length - 1] ?? "";
    await next.click();
    await expect(page).toHaveURL(/cursor=/);
    await expect(entries.locator("h2 a").first()).not.toHaveText(before);
    pages += 1;
  }
  expect(pages).toBeGreaterThan(1);
  // Every one once, oldest first, across the pages.
  expect(seen).toEqual(
    Array.from({ length: count }, (_, i) => `Paged ${String(i).padStart(2, "0")}`),
  );
  await page.getByRole("link", { name: "← Oldest" }).click();
  await expect(page).toHaveURL(/\/inbox$/);
  await expect(entries).toHaveCount(20);
  // The worker's other tests find their reviews on the inbox's first page.
  for (const planId of planIds) {
    await agent.ok("cancel_plan", { planId, reason: "The paging test is over." });
  }
});

test("a long proposal shows every field in the agent's order, the long one shortened on its own, in the inbox and on the plan page, and its Show all opens it whole", async ({
  page,
  agent,
  app,
}) => {
  // A long field first, then keys jsonb would put in another order (shorter first).
  const proposedResult = {
    rows: Array.from({ length: 400 }, (_, i) => `row ${i} of the long table`),
    verdict: "holds",
    n: 3,
  };
  const plan = await askForReview(agent, "Long proposal", { proposedResult });
  await signIn(page, app.tenantA.email);
  await page.goto(`/inbox?plan=${plan.planId}`);
  const entry = page.getByTestId("inbox-review").filter({ hasText: "Long proposal" });
  const fields = entry.getByTestId("review-proposal-field");
  await expect(fields.locator("dt")).toHaveText(["rows", "verdict", "n"]);
  const shown = fields.first().getByTestId("review-proposal-json");
  await expect(shown).toContainText('"row 0 of the long table"');
  await expect(shown).not.toContainText("row 399");
  expect((await shown.innerText()).trimEnd().endsWith("…")).toBe(true);
  await expect(fields.nth(1).getByTestId("review-proposal-json")).toHaveText('"holds"');
  await expect(fields.nth(2).getByTestId("review-proposal-json")).toHaveText("3");
  await expect(entry.getByTestId("review-proposal-json-all")).toHaveCount(1);
  const [full] = await Promise.all([
    page.waitForEvent("popup"),
    fields.first().getByTestId("review-proposal-json-all").click(),
  ]);
  await expect(full.locator("body")).toContainText('"row 399 of the long table"');
  expect(JSON.parse(await full.locator("body").innerText())).toEqual(proposedResult.rows);
  await full.close();

  // The plan page's review panel shows it the same way.
  await page.goto(`/plans/${plan.planId}`);
  const panel = page.getByTestId("review-panel");
  await expect(panel.getByTestId("review-proposal-field").locator("dt")).toHaveText([
    "rows",
    "verdict",
    "n",
  ]);
  await expect(panel.getByTestId("review-proposal-json").first()).not.toContainText("row 399");
  await expect(panel.getByTestId("review-proposal-json-all")).toHaveText(/^Show all \(\d+ KB\)$/);
  // Another team's person cannot read it.
  const href = await panel.getByTestId("review-proposal-json-all").getAttribute("href");
  await page.getByRole("button", { name: "Sign out" }).click();
  await signIn(page, app.tenantB.email);
  expect((await page.request.get(href ?? "")).status()).toBe(404);
  await agent.ok("cancel_plan", { planId: plan.planId, reason: "The test is over." });
});
