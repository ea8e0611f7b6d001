import { expect, signIn, test } from "./fixtures";

// The pages that show what agents stored show long values shortened, each
// whole behind a link (docs/web.md; sizes in tests/bounded-readers.test.ts).

test("a proposal of many fields shows its first fields in the inbox, and the whole proposal behind a link", async ({
  page,
  agent,
  app,
}) => {
  const name = `Wide proposal ${Date.now()}`;
  const created = await agent.ok("create_research_plan", {
    name,
    researchQuestion: "Which fields hold?",
    steps: [{ stepType: "analyze", instructions: "Compare them." }],
  });
  const next = await agent.ok("get_next_step", { planId: created.planId });
  const proposedResult = Object.fromEntries(
    Array.from({ length: 100 }, (_, i) => [`field${i}`, `value ${i} `.repeat(30)]),
  );
  await agent.ok("request_user_review", {
    planId: created.planId,
    stepId: next.step.stepId,
    summary: "Check the fields.",
    proposedResult,
  });
  await signIn(page, app.tenantA.email);
  await page.goto(`/inbox?plan=${created.planId}`);
  const entry = page.getByTestId("inbox-review").filter({ hasText: name });
  const fields = entry.getByTestId("review-proposal-field");
  await expect(fields.first()).toContainText("field0");
  const shown = await fields.count();
  expect(shown).toBeGreaterThan(0);
  expect(shown).toBeLessThan(100);
  await expect(entry.getByTestId("review-proposal-omitted")).toContainText(
    `${100 - shown} more fields not listed here.`,
  );
  const href = await entry.getByTestId("review-proposal-all").getAttribute("href");
  const whole = await page.request.get(href ?? "");
  expect(whole.status()).toBe(200);
  expect(await whole.json()).toEqual(proposedResult);
});

test("an artifact's long text and content show their beginning, each whole behind Show all", async ({
  page,
  agent,
  app,
}) => {
  const contentText = `${"A finding that goes on. ".repeat(200)}The end.`;
  const content = { rows: Array.from({ length: 200 }, (_, i) => `row ${i}`) };
  const { artifactId } = await agent.ok("store_research", {
    artifactType: "finding",
    title: `Long finding ${Date.now()}`,
    content,
    contentText,
    confidence: 0.7,
  });
  await signIn(page, app.tenantA.email);
  await page.goto(`/library/${artifactId}`);
  const text = page.getByTestId("artifact-text");
  await expect(text).toContainText("A finding that goes on.");
  await expect(text).not.toContainText("The end.");
  const all = page.getByTestId("artifact-text-all");
  await expect(all).toContainText("Show all");
  const whole = await page.request.get((await all.getAttribute("href")) ?? "");
  expect(await whole.text()).toBe(contentText);
  await page.getByText("Structured content").click();
  await expect(page.getByTestId("artifact-content")).toContainText('"row 0"');
  const json = await page.request.get(
    (await page.getByTestId("artifact-content-all").getAttribute("href")) ?? "",
  );
  expect(await json.json()).toEqual(content);
});
