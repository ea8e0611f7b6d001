import { expect, keepScreenshot, report, signIn, test } from "./fixtures";

const DIGEST = "ef".repeat(32);

/**
 * docs/evidence.md in the browser: the reviewer of a checkpoint sees the claims
 * so far with their sources and quotes, the unsupported and contested ones
 * first; the plan page lists each page and DOI once, exports the evidence with
 * its digests, and shows the deliverable's citation check beside it.
 */
test("a reviewer checks the claims, and the plan page shows the sources and the deliverable's citations", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "Evidence: heat pumps",
    researchQuestion: "Are heat pumps worth it in cold climates?",
    steps: [
      { stepType: "search", instructions: "Find field studies." },
      { stepType: "checkpoint", instructions: "Present the claims for review." },
      { stepType: "synthesize", instructions: "Write the answer." },
    ],
  });
  const planId: string = created.planId;
  const search = await agent.ok("get_next_step", { planId });
  await agent.ok("submit_step_result", {
    planId,
    stepId: search.step.stepId,
    result: { sourceCount: 2 },
    stepExecutionReport: {
      ...report,
      webFetches: [
        { url: "https://example.org/field-study?utm_source=x", title: "Field study" },
        { url: "HTTP://example.org/field-study/#summary", contentDigest: DIGEST },
        "https://example.org:443/field-study",
        "https://doi.org/10.1016/J.ENBUILD.2020.110000",
        "doi:10.1016/j.enbuild.2020.110000",
      ],
    },
    evidence: {
      claims: [
        {
          text: "Heat pumps keep a COP of 2.5 at -15 °C.",
          key: true,
          supports: [
            { source: "https://example.org/field-study", quote: "a COP of 2.5 at -15 °C" },
          ],
        },
        { text: "Installers are scarce in Finland." },
        {
          text: "Running costs fall by half.",
          supports: [{ source: "https://example.org/field-study", locator: "Table 3" }],
          contradicts: [{ source: "doi:10.1016/j.enbuild.2020.110000", quote: "savings of 20%" }],
        },
      ],
    },
  });
  const checkpoint = await agent.ok("get_next_step", { planId });
  await agent.ok("request_user_review", {
    planId,
    stepId: checkpoint.step.stepId,
    summary: "Three claims so far; one lacks a source and one is disputed.",
  });

  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${planId}`);
  const claims = page.getByTestId("review-panel").getByTestId("claim");
  await expect(claims).toHaveCount(3);
  await expect(claims.nth(0)).toHaveAttribute("data-status", "unsupported");
  await expect(claims.nth(0)).toContainText("Installers are scarce in Finland.");
  await expect(claims.nth(1)).toHaveAttribute("data-status", "contested");
  await expect(claims.nth(1)).toContainText("Contradicted by");
  await expect(claims.nth(1)).toContainText("savings of 20%");
  await expect(claims.nth(2)).toHaveAttribute("data-status", "supported");
  await expect(claims.nth(2)).toContainText("a COP of 2.5 at -15 °C");
  // A citation names its source by its link: titles are not copied per citation
  // (issue 40); the sources list below shows each title once.
  await expect(
    claims.nth(2).getByRole("link", { name: "https://example.org/field-study" }),
  ).toHaveAttribute("href", "https://example.org/field-study");
  await keepScreenshot(page, "review-claims");

  // One source per page and per DOI, with the digest the agent reported.
  const sources = page.getByTestId("sources").getByTestId("source");
  await expect(sources).toHaveCount(2);
  await expect(page.getByTestId("sources")).toContainText(`sha256:${DIGEST.slice(0, 12)}`);
  const exported = await page.request.get(`/plans/${planId}/evidence`);
  expect(exported.status()).toBe(200);
  const json = await exported.json();
  expect(json).toMatchObject({ format: "cairn-evidence/1", planId });
  expect(json.sources).toContainEqual(
    expect.objectContaining({
      sourceKey: "https://example.org/field-study",
      contentDigest: `sha256:${DIGEST}`,
    }),
  );

  await page.getByTestId("review-panel").getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(/Approved/);
  const synthesize = await agent.ok("get_next_step", { planId });
  await agent.ok("submit_step_result", {
    planId,
    stepId: synthesize.step.stepId,
    result: {},
    stepExecutionReport: report,
  });
  await agent.ok("store_research_output", {
    planId,
    outputMediaType: "markdown_report",
    content:
      "# Heat pumps\n\nThey hold up in the cold [1], though savings are disputed [2].\n\n## References\n\n1. https://blog.unread.example/cold\n2. https://doi.org/10.1016/j.enbuild.2020.110000\n",
  });
  await page.reload();
  const check = page.getByTestId("citation-check");
  await expect(check).toContainText(
    "Citations: the deliverable cites 2 sources, 1 of them read by this plan.",
  );
  await expect(check.getByTestId("citations-not-read")).toContainText(
    "https://blog.unread.example/cold",
  );
  await expect(check.getByTestId("key-claims-uncited")).toContainText(
    "Heat pumps keep a COP of 2.5 at -15 °C.",
  );
  await keepScreenshot(page, "deliverable-citation-check");

  // On a phone the page with its evidence, citations and trail does not scroll sideways.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(check).toBeVisible();
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - window.innerWidth,
  );
  expect(overflow).toBeLessThanOrEqual(1);
  await keepScreenshot(page, "plan-page-evidence-390");
});
