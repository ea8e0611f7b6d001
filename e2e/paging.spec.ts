import { expect, signIn, test } from "./fixtures";

// The web lists that page by cursor (docs/web.md, "Lists that page"); the inbox's is in inbox.spec.ts.

test("the plans list pages by cursor with its filters kept, and an edited link offers the first page", async ({
  page,
  agent,
  app,
}) => {
  // Unique to this run, so the search finds only these plans: one more than a page.
  const tag = `Paged${Date.now()}`;
  const names = Array.from({ length: 21 }, (_, i) => `${tag} ${String(i).padStart(2, "0")}`);
  for (const name of names) {
    await agent.ok("create_research_plan", {
      name,
      researchQuestion: `What about ${name}?`,
      steps: [{ stepType: "search", instructions: "Search." }],
    });
  }
  await signIn(page, app.tenantA.email);
  await page.goto(`/plans?filter=active&q=${tag}`);
  const rows = page.getByTestId("plans-table").locator("tbody tr");
  await expect(rows).toHaveCount(20);
  await expect(page.getByTestId("plans-shown")).toHaveText("21 plans in all");
  const firstPage = await rows.locator("a.strong").allInnerTexts();
  expect(firstPage).toEqual(names.slice(1).reverse());

  await page.getByTestId("plans-next").click();
  await expect(page).toHaveURL(/filter=active/);
  await expect(page).toHaveURL(new RegExp(`q=${tag}.*cursor=`));
  await expect(rows).toHaveCount(1);
  await expect(rows.locator("a.strong")).toHaveText(names[0] ?? "");
  await expect(page.getByTestId("plans-next")).toHaveCount(0);

  await page.getByRole("link", { name: "← Newest" }).click();
  await expect(page).not.toHaveURL(/cursor=/);
  await expect(rows).toHaveCount(20);

  await page.goto(`/plans?filter=active&q=${tag}&cursor=edited`);
  await expect(page.getByTestId("cursor-refused")).toContainText("out of date");
  await page.getByRole("link", { name: "Go to the first page" }).click();
  await expect(page).toHaveURL(new RegExp(`/plans\\?filter=active&q=${tag}$`));
  await expect(rows).toHaveCount(20);
});

test("a plan's audit trail pages by cursor, newest first, and an edited link offers the first page", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "Long trail",
    researchQuestion: "What does a long trail look like?",
    steps: [{ stepType: "search", instructions: "Search." }],
  });
  const planId = created.planId as string;
  // One audit event per resume: enough for a second page.
  for (let i = 0; i < 26; i += 1) {
    await agent.ok("get_research_context", { planId, artifactsLimit: 0 });
  }
  await signIn(page, app.tenantA.email);
  await page.goto(`/plans/${planId}`);
  const entries = page.getByTestId("audit-trail").locator("tbody tr");
  await expect(entries).toHaveCount(25);
  const total = Number((await page.getByTestId("audit-shown").innerText()).split(" ")[0]);
  expect(total).toBeGreaterThan(25);

  await page.getByTestId("audit-next").click();
  await expect(page).toHaveURL(/audit=/);
  await expect(entries).toHaveCount(total - 25);
  // The oldest event, the plan's creation, ends the trail.
  await expect(entries.last()).toContainText("plan_modified");
  await page.getByRole("link", { name: "← Newest" }).click();
  await expect(page).toHaveURL(new RegExp(`/plans/${planId}$`));
  await expect(entries).toHaveCount(25);

  await page.goto(`/plans/${planId}?audit=edited`);
  await expect(page.getByTestId("cursor-refused")).toBeVisible();
  await page.getByRole("link", { name: "Go to the first page" }).click();
  await expect(page).toHaveURL(new RegExp(`/plans/${planId}$`));
  await expect(entries).toHaveCount(25);
});

test("the library and the tool-call log answer an edited link with their first page, filters kept", async ({
  page,
  app,
}) => {
  await signIn(page, app.tenantA.email);
  for (const [edited, first] of [
    ["/library?type=finding&cursor=edited", /\/library\?type=finding$/],
    ["/admin/tool-calls?errors=only&cursor=edited", /\/admin\/tool-calls\?errors=only$/],
    ["/inbox?mine=1&cursor=edited", /\/inbox\?mine=1$/],
  ] as const) {
    await page.goto(edited);
    await expect(page.getByTestId("cursor-refused")).toBeVisible();
    await page.getByRole("link", { name: "Go to the first page" }).click();
    await expect(page).toHaveURL(first);
    await expect(page.getByTestId("cursor-refused")).toHaveCount(0);
  }
});
