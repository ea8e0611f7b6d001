/**
 * The pages a new admin meets in the first hour, as issue 31 found them: a
 * six-step plan's page (short, its flow's gate labels apart, no hydration
 * error), Connect signed in, Stalled, Skill runs with one day of feedback, and
 * the tool-call log. The fixture fails each test on any console error.
 */
import {
  expect,
  expectHydrated,
  keepScreenshot,
  planAwaitingReview,
  report,
  signIn,
  submitSignIn,
  test,
} from "./fixtures";

test("a six-step plan's page is short, its gate labels do not overlap, and hydrates cleanly", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "Six steps",
    researchQuestion: "Which heat pump suits a Nordic house?",
    steps: [
      { stepType: "search", instructions: "Find field trials below minus 15 °C." },
      { stepType: "extract", instructions: "Pull the seasonal COP figures." },
      { stepType: "analyze", instructions: "Compare the models." },
      { stepType: "critique", instructions: "Challenge the comparison." },
      { stepType: "search", instructions: "Fill the gaps the critique found." },
      { stepType: "synthesize", instructions: "Answer the question." },
    ],
    branchingConditions: [
      {
        afterStepOrder: 1,
        conditionExpression: "result.sourceCount < 2",
        ifTrueAction: "fail",
        actionParams: { reason: "no sources" },
      },
      {
        afterStepOrder: 1,
        conditionExpression: "result.sourceCount < 5",
        ifTrueAction: "add_steps",
        actionParams: { focus: "more trials" },
      },
    ],
  });
  const planId = created.planId;
  for (let order = 1; order <= 6; order += 1) {
    const next = await agent.ok("get_next_step", { planId });
    await agent.ok("submit_step_result", {
      planId,
      stepId: next.step.stepId,
      result: { sourceCount: 7, note: `Step ${order} done.` },
      resultSummary: `Step ${order}: what was found, in a sentence or two.`,
      confidence: 0.8,
      stepExecutionReport: report,
    });
  }
  expect((await agent.ok("get_next_step", { planId })).status).toBe("plan_complete");

  await signIn(page, app.tenantA.email);
  await page.goto(`/plans/${planId}`);
  await expect(page.locator(".plan-header").getByTestId("status")).toHaveText("Completed");
  // Hydrated: the SVG titles rendered the same on the server and the client.
  await expectHydrated(page);
  const title = page.locator(".flow-node title").first();
  await expect(title).toHaveText(/^Step 1 \(search\): completed$/);
  const labels = await page.locator(".flow-label").evaluateAll((nodes) =>
    nodes.map((node) => {
      const box = node.getBoundingClientRect();
      return { left: box.left, right: box.right, top: box.top, bottom: box.bottom };
    }),
  );
  expect(labels).toHaveLength(2);
  const [fail, addSteps] = labels;
  const overlap =
    fail && addSteps
      ? fail.left < addSteps.right &&
        addSteps.left < fail.right &&
        fail.top < addSteps.bottom &&
        addSteps.top < fail.bottom
      : true;
  expect(overlap).toBe(false);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  // The trail's sentence says how much of it the scheduler's signing pass has
  // signed, so its length, and its lines (one or two), depend on when that
  // pass last ran: the page is measured without it, against the bar less the
  // one line it takes when the trail is signed whole or not at all.
  const trailSentence = await page
    .getByTestId("trail-integrity")
    .evaluate((node) => node.getBoundingClientRect().height);
  expect(height - trailSentence).toBeLessThan(3_400 - 25);
  await keepScreenshot(page, "plan-page-six-steps");
});

test("a signed-in admin keeps their header on Connect; Stalled badges say why; a one-day chart dates once", async ({
  page,
  agent,
  app,
}) => {
  await signIn(page, app.tenantA.email);
  await page.goto("/connect");
  await expect(page.getByTestId("signed-in-as")).toContainText(app.tenantA.email);
  await expect(page.getByRole("link", { name: "Sign in" })).toHaveCount(0);
  await keepScreenshot(page, "connect-signed-in");
  // Step 1's "Users & keys" leads to the page that makes the key.
  await page.getByRole("main").getByRole("link", { name: "Users & keys" }).click();
  await expect(page.getByRole("button", { name: "Create key" })).toBeVisible();

  // A plan with a failed step is listed under Stalled while it is still executing.
  const created = await agent.ok("create_research_plan", {
    name: "Failed step",
    researchQuestion: "q",
    steps: [
      { stepType: "search", instructions: "Search." },
      { stepType: "synthesize", instructions: "Answer." },
    ],
  });
  const first = await agent.ok("get_next_step", { planId: created.planId });
  await agent.ok("modify_plan", {
    planId: created.planId,
    action: "fail_step",
    stepId: first.step.stepId,
    reason: "The source is down.",
    modificationRationale: "Cannot be done today.",
  });
  await page.goto("/admin/stalled");
  const card = page.getByTestId("stalled-plan").filter({ hasText: "Failed step" });
  await expect(card.getByTestId("attention")).toHaveText("Step failed");
  await expect(card.getByTestId("status")).toHaveCount(0);

  await agent.ok("submit_research_feedback", {
    planId: created.planId,
    feedbackType: "closing",
    satisfaction: 5,
    summary: "Useful.",
    followUpRequested: false,
  });
  await page.goto("/admin/skills");
  const chart = page.getByTestId("satisfaction-chart");
  await expect(chart).toBeVisible();
  const day = new Date().toISOString().slice(0, 10);
  await expect(chart.locator("text.chart-label", { hasText: day })).toHaveCount(1);
});

test("a link to a review, opened signed out, comes back to the review after sign-in", async ({
  page,
  agent,
  app,
}) => {
  const { planId } = await planAwaitingReview(agent, "Back to the review");
  await page.goto(`/plans/${planId}#review`);
  await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Fplans%2F/);
  await submitSignIn(page, app.tenantA.email);
  await expect(page).toHaveURL(new RegExp(`/plans/${planId}#review$`));
  await expect(page.getByRole("heading", { name: "Back to the review" })).toBeVisible();

  // A return path that leaves the site is not followed.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.goto("/sign-in?callbackUrl=%2F%5Cevil.example%2F");
  await submitSignIn(page, app.tenantA.email);
  await expect(page).toHaveURL(/\/plans$/);
});

test("a Show all link opened signed out comes back to its value after sign-in; a script still gets 401", async ({
  page,
  agent,
  app,
}) => {
  const notes = `Drilling costs 900-1200 NOK per metre. ${"Most houses need 150-250 m. ".repeat(120)}`;
  const { planId, reviewRequestId } = await planAwaitingReview(agent, "Long proposal", {
    notes,
    city: "Oslo",
  });
  // The long address a "Show all" link opens, with its query string.
  const valuePath = `/plans/${planId}/full?review=${reviewRequestId}&part=proposal&field=notes`;
  await page.goto(valuePath);
  await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Fplans%2F.*%2Ffull%3Freview%3D/);
  await submitSignIn(page, app.tenantA.email);
  await expect(page).toHaveURL(`${app.url}${valuePath}`);
  await expect(page.locator("body")).toContainText("Most houses need 150-250 m.");

  // Without a browser's Accept (a script, a fetch), the refusal stays a plain 401.
  const refused = await fetch(`${app.url}${valuePath}`);
  expect(refused.status).toBe(401);
  expect(await refused.text()).toBe("Sign in to see this value.");
});

test("a comparison table stored as comparison_table shows as a table, and downloads as Markdown", async ({
  page,
  agent,
  app,
}) => {
  const { planId } = await agent.ok("create_research_plan", {
    name: "[Inspector] Heat pump adoption",
    researchQuestion: "q",
    steps: [{ stepType: "synthesize", instructions: "Compare." }],
  });
  const step = await agent.ok("get_next_step", { planId });
  await agent.ok("submit_step_result", {
    planId,
    stepId: step.step.stepId,
    result: { done: true },
    stepExecutionReport: {
      thinking: "Compared.",
      webSearches: [],
      webFetches: [],
      otherToolCalls: [],
      subagents: [],
    },
  });
  await agent.ok("store_research_output", {
    planId,
    outputMediaType: "comparison_table",
    content: "| Country | Share |\n| --- | --- |\n| Norway | 60% |\n| Sweden | 43% |",
  });
  await signIn(page, app.tenantA.email);
  await page.goto(`/plans/${planId}`);
  const table = page.getByTestId("deliverable").getByRole("table");
  await expect(table.getByRole("cell", { name: "Norway" })).toBeVisible();
  const download = page.waitForEvent("download");
  await page.getByRole("link", { name: "Download" }).click();
  // The plan's name in safe characters, no leading dash, and Markdown's extension.
  const safeName = "Inspector-Heat-pump-adoption";
  expect((await download).suggestedFilename()).toBe(`${safeName}.md`);
});

test("a plan waiting for its agent to add steps says so on its page", async ({
  page,
  agent,
  app,
}) => {
  const { planId } = await agent.ok("create_research_plan", {
    name: "Waiting for steps",
    researchQuestion: "q",
    steps: [
      { stepType: "search", instructions: "Search." },
      { stepType: "synthesize", instructions: "Answer." },
    ],
    branchingConditions: [
      {
        afterStepOrder: 1,
        conditionExpression: "result.sourceCount < 5",
        ifTrueAction: "add_steps",
        actionParams: { focus: "more sources" },
      },
    ],
  });
  const step = await agent.ok("get_next_step", { planId });
  await agent.ok("submit_step_result", {
    planId,
    stepId: step.step.stepId,
    result: { sourceCount: 2 },
    stepExecutionReport: {
      thinking: "Few sources.",
      webSearches: [],
      webFetches: [],
      otherToolCalls: [],
      subagents: [],
    },
  });
  await signIn(page, app.tenantA.email);
  await page.goto(`/plans/${planId}`);
  await expect(page.getByTestId("awaiting-steps")).toHaveText(
    "Awaiting steps from the agent (after step 1)",
  );
});

test("on a phone, a plan page with evidence, its trail, a long deliverable and long links does not scroll sideways, nor do the admin's tables", async ({
  page,
  agent,
  app,
}) => {
  // Links as agents cite them: long, with no place to break a line.
  const readUrl = `https://statistics.example.org/heat-pumps/${"nordicsalesbyyear".repeat(8)}table.csv`;
  const unreadUrl = `https://archive.example.net/reports/${"districtheatingtariffs".repeat(10)}2025.pdf`;
  const { planId } = await agent.ok("create_research_plan", {
    name: "Heat pumps on a phone",
    researchQuestion: "How fast are heat pumps adopted in the Nordics?",
    steps: [
      { stepType: "search", instructions: "Find the national statistics." },
      { stepType: "synthesize", instructions: "Write the comparison." },
    ],
  });
  const search = await agent.ok("get_next_step", { planId });
  await agent.ok("submit_step_result", {
    planId,
    stepId: search.step.stepId,
    result: { sourceCount: 1, source: readUrl },
    resultSummary: `One national table: ${readUrl}`,
    stepExecutionReport: {
      ...report,
      webFetches: [{ url: readUrl, summary: "Yearly sales by country." }],
    },
    evidence: {
      claims: [
        {
          text: `Norway sold over 100,000 heat pumps a year (${readUrl}).`,
          key: true,
          supports: [{ source: readUrl, locator: "table 1" }],
        },
      ],
    },
  });
  const synthesize = await agent.ok("get_next_step", { planId });
  await agent.ok("submit_step_result", {
    planId,
    stepId: synthesize.step.stepId,
    result: { rows: 2 },
    stepExecutionReport: report,
  });
  const paragraph = "Heat pumps spread fastest where power is cheap and winters long [1]. ".repeat(
    12,
  );
  await agent.ok("store_research_output", {
    planId,
    outputMediaType: "comparison_table",
    content: `# Adoption\n\n| Country | Share | Source |\n| --- | --- | --- |\n| Norway | 60% | ${readUrl} |\n| Denmark | 20% | ${unreadUrl} |\n\n${paragraph}\n\n${paragraph}\n\n## References\n\n1. ${readUrl}\n2. ${unreadUrl}\n`,
  });

  await signIn(page, app.tenantA.email);
  await page.setViewportSize({ width: 390, height: 844 });
  const sidewaysScroll = () =>
    page.evaluate(() => (document.scrollingElement?.scrollWidth ?? 0) - window.innerWidth);
  await page.goto(`/plans/${planId}`);
  await expect(page.getByTestId("citations-not-read")).toContainText(unreadUrl);
  await expect(page.getByTestId("sources")).toBeVisible();
  await expect(page.getByTestId("audit-trail")).toBeVisible();
  expect(await sidewaysScroll()).toBeLessThanOrEqual(0);
  await keepScreenshot(page, "plan-page-long-links-390");
  // The tables of Users & keys and Webhooks scroll in their own boxes, labels and all.
  for (const path of ["/admin/users", "/admin/webhooks"]) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    expect(await sidewaysScroll(), path).toBeLessThanOrEqual(0);
  }
});
