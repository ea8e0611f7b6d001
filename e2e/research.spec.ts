import { expect, keepScreenshot, NOT_FOUND, report, signIn, test } from "./fixtures";

const SESSION = "e2e-research-session";

test("the research layer in the browser: library search, provenance, deliverable, feedback and skill runs", async ({
  page,
  agent,
  app,
}) => {
  const started = await agent.ok("log_skill_execution", {
    skillName: "research",
    status: "started",
    sessionId: SESSION,
    metadata: {
      topic: "Geothermal heating in Reykjavik",
      researchType: "general_topic",
      scope: "Iceland, district heating, 2020-2026",
      depthSignals: ["quick"],
      outputMediaType: "markdown",
      skipQuestionsReason: "Focused question.",
      routingRationale: "One option, two dimensions, low ambiguity, 'quick' -> scan.",
      delegatedTo: "scan",
      originalQuery: "Quick overview of geothermal heating in Reykjavik?",
    },
  });
  const created = await agent.ok("create_research_plan", {
    name: "[Scan] Geothermal heating in Reykjavik",
    researchQuestion: "How does Reykjavik heat its homes with geothermal water?",
    steps: [{ stepType: "search", instructions: "Find how the district heating works." }],
    sessionId: SESSION,
  });
  expect(created.linkedExecutionId).toBe(started.executionId);
  const step = await agent.ok("get_next_step", { planId: created.planId });
  const artifact = await agent.ok("store_research", {
    artifactType: "source_summary",
    title: "Reykjavik geothermal district heating network",
    content: { households: 0.9 },
    contentText:
      "Ninety percent of Reykjavik households are heated by geothermal water piped from boreholes.",
    confidence: 0.9,
    sourceUrls: ["https://example.org/reykjavik-heating"],
    planId: created.planId,
    stepId: step.step.stepId,
  });
  await agent.ok("submit_step_result", {
    planId: created.planId,
    stepId: step.step.stepId,
    result: { households: 0.9 },
    stepExecutionReport: report,
  });
  await agent.ok("store_research_output", {
    planId: created.planId,
    outputMediaType: "markdown",
    content:
      "# Geothermal Reykjavik\n\n**90%** of homes use it.\n\n<script>window.__pwned = true</script>\n\n- cheap\n- clean\n\n| figure | value |\n| --- | --- |\n| homes heated | 90% |",
  });
  await agent.ok("submit_research_feedback", {
    planId: created.planId,
    feedbackType: "initial",
    satisfaction: 4,
    summary: "Clear and short.",
    followUpRequested: false,
  });
  await agent.ok("log_skill_execution", {
    executionId: started.executionId,
    skillName: "research",
    status: "completed",
    metadata: { stepsCompleted: 1 },
  });

  await signIn(page, app.tenantA.researcherEmail);
  await page.getByRole("link", { name: "Library" }).click();
  await expect(page.getByRole("heading", { name: "Research library" })).toBeVisible();
  await page.getByRole("searchbox", { name: "Search" }).fill("geothermal househol");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(/q=geothermal\+househol/);
  const results = page.getByTestId("search-results");
  await expect(results.getByRole("link").first()).toHaveText(
    "Reykjavik geothermal district heating network",
  );
  await expect(results.locator("mark").first()).toBeVisible();
  await keepScreenshot(page, "library-search");

  await results
    .getByRole("link", { name: "Reykjavik geothermal district heating network" })
    .click();
  await expect(page).toHaveURL(new RegExp(`/library/${artifact.artifactId}$`));
  const provenance = page.getByTestId("provenance");
  await expect(provenance).toContainText(
    "How does Reykjavik heat its homes with geothermal water?",
  );
  await expect(provenance).toContainText("1. search");
  await expect(page.getByTestId("sources").getByRole("link")).toHaveAttribute(
    "href",
    "https://example.org/reykjavik-heating",
  );

  await provenance.getByRole("link", { name: "[Scan] Geothermal heating in Reykjavik" }).click();
  const deliverable = page.getByTestId("deliverable");
  await expect(deliverable.getByRole("heading", { name: "Geothermal Reykjavik" })).toBeVisible();
  await expect(deliverable.locator("strong")).toHaveText("90%");
  await expect(deliverable.locator("script")).toHaveCount(0);
  // The key figures' Markdown table is a table, not a paragraph of pipes.
  await expect(deliverable.getByRole("columnheader", { name: "figure" })).toBeVisible();
  await expect(deliverable.getByRole("cell", { name: "90%" })).toBeVisible();
  expect(await page.evaluate(() => (window as { __pwned?: boolean }).__pwned)).toBeUndefined();
  await expect(page.getByTestId("feedback")).toContainText("Clear and short.");
  await expect(page.getByTestId("skill-execution")).toContainText("scan");
  await expect(page.getByTestId("skill-execution")).toContainText("'quick' -> scan.");
  const download = await page.request.get(`/plans/${created.planId}/deliverable`);
  expect(download.status()).toBe(200);
  expect(download.headers()["content-disposition"]).toContain(
    'attachment; filename="Scan-Geothermal-heating-in-Reykjavik.md"',
  );
  expect(download.headers()["x-content-type-options"]).toBe("nosniff");
  expect(await download.text()).toContain("# Geothermal Reykjavik");
  await keepScreenshot(page, "plan-deliverable");

  // Admin view of skill runs.
  await page.context().clearCookies();
  await signIn(page, app.tenantA.email);
  await page.getByRole("link", { name: "Skill runs" }).click();
  await expect(page.getByTestId("routing-counts")).toContainText("Scan");
  const runs = page.getByTestId("skill-runs");
  await expect(runs).toContainText("Geothermal heating in Reykjavik");
  await expect(runs).toContainText("Completed");
  await expect(page.getByTestId("satisfaction-chart")).toBeVisible();
  const skill = await page.request.get("/skills/research-scan");
  expect(skill.status()).toBe(200);
  expect(skill.headers()["content-type"]).toContain("text/markdown");
  await keepScreenshot(page, "admin-skill-runs");
});

test("another tenant's artifact is a 404", async ({ page, agent, app, allowConsoleError }) => {
  allowConsoleError(NOT_FOUND);
  const stored = await agent.ok("store_research", {
    artifactType: "finding",
    title: "Alpha only finding",
    content: {},
    contentText: "Only Alpha may read this.",
    confidence: 0.5,
  });
  await signIn(page, app.tenantB.researcherEmail);
  const response = await page.goto(`/library/${stored.artifactId}`);
  expect(response?.status()).toBe(404);
  await page.goto("/library?q=Alpha+only+finding");
  await expect(page.getByText("Nothing in the library matches")).toBeVisible();
});

test("the plan page lists the newest artifacts by excerpt and sends only what it shows", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "A plan that stored a lot",
    researchQuestion: "Does the plan page stay small?",
    steps: [{ stepType: "search", instructions: "Collect." }],
  });
  for (let i = 1; i <= 12; i += 1) {
    await agent.ok("store_research", {
      artifactType: "source_summary",
      title: `Stored source ${i}`,
      content: { secret: `CONTENT-ONLY-${i}` },
      contentText: `Opening words of source ${i}. ${"Filler sentence. ".repeat(30)}TEXT-TAIL-${i}`,
      confidence: 0.6,
      planId: created.planId,
    });
  }
  await agent.ok("store_research_output", {
    planId: created.planId,
    outputMediaType: "markdown",
    content: `EARLIER-DRAFT ${"words ".repeat(50_000)}`,
  });
  await agent.ok("store_research_output", {
    planId: created.planId,
    outputMediaType: "markdown",
    content: "# Final report\n\nShort and final.",
  });

  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${created.planId}`);
  await expect(page.getByTestId("deliverable")).toContainText("Short and final.");
  const list = page.getByTestId("plan-artifacts");
  await expect(list.getByRole("listitem")).toHaveCount(10);
  await expect(list.getByRole("listitem").first()).toContainText("Stored source 12");
  await expect(list.getByRole("listitem").first()).toContainText("Opening words of source 12.");
  await expect(list).not.toContainText("Stored source 2");
  await expect(page.getByTestId("plan-artifacts-more")).toHaveText(
    "The newest 10 of 12 artifacts; the Library has every one.",
  );
  // Neither the artifacts' full content nor the earlier deliverable reach the browser.
  const html = await page.content();
  for (const marker of ["TEXT-TAIL-", "CONTENT-ONLY-", "EARLIER-DRAFT"]) {
    expect(html, marker).not.toContain(marker);
  }

  // The full text is one click away.
  await list.getByRole("link", { name: "Stored source 12" }).click();
  await expect(page.getByText("TEXT-TAIL-12")).toBeVisible();
});

test("the plan page shows its steps a page at a time and the deliverable's beginning", async ({
  page,
  agent,
  app,
}) => {
  // Forty steps of 2,000 characters each: more than one page's 48 KB of what steps show.
  const created = await agent.ok("create_research_plan", {
    name: "A plan of many long steps",
    researchQuestion: "Does the plan page page its steps?",
    steps: Array.from({ length: 40 }, (_, i) => ({
      stepType: "analyze",
      instructions: `Step ${i + 1}. ${"Read closely. ".repeat(140)}`,
    })),
  });
  await agent.ok("store_research_output", {
    planId: created.planId,
    outputMediaType: "markdown",
    content: `# Long report\n\n${"A finding, weighed. ".repeat(200)}REPORT-TAIL`,
  });

  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${created.planId}`);
  await expect(page.getByTestId("deliverable").getByRole("heading")).toHaveText("Long report");
  await expect(page.getByTestId("deliverable-shortened")).toContainText("first 2,000 characters");
  expect(await page.content()).not.toContain("REPORT-TAIL");

  const pages = page.getByTestId("steps-pages");
  await expect(page.getByTestId("step-1")).toBeVisible();
  await expect(page.getByTestId("step-40")).toHaveCount(0);
  await expect(pages.getByTestId("steps-shown")).toHaveText(/^Steps 1–\d+ of 40$/);
  // The flow still draws every step.
  await expect(page.getByRole("img", { name: /^Flow of 40 steps/ })).toBeVisible();
  await pages.getByRole("link", { name: "Later steps →" }).click();
  await expect(page.getByTestId("step-40")).toBeVisible();
  await expect(page.getByTestId("step-1")).toHaveCount(0);
  await pages.getByRole("link", { name: "← First steps" }).click();
  await expect(page.getByTestId("step-1")).toBeVisible();
});
