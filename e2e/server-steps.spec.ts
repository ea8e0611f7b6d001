import { expect, keepScreenshot, signIn, test } from "./fixtures";

const QUESTION = "Do heat pumps work in cold climates?";

test("a plan's page tells Cairn's own steps apart and draws the bindings between steps", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "Server-run steps",
    researchQuestion: QUESTION,
    steps: [
      {
        stepType: "custom",
        instructions: "Keep what we know.",
        tool: "store_research",
        arguments: {
          artifactType: "finding",
          title: "Cold climate heat pumps",
          content: { note: "They work down to -25 °C." },
          contentText: "Cold climate heat pumps work down to -25 °C.",
          confidence: 0.8,
        },
      },
      {
        stepType: "search",
        instructions: "Find prior research on the question.",
        tool: "search_sources",
        arguments: { query: "{{plan.researchQuestion}}", limit: 5 },
      },
      {
        stepType: "analyze",
        instructions: "Weigh the prior research.",
        inputs: { prior: "{{steps.2.result.results}}", kept: "{{steps.1.result.artifactId}}" },
        outputSchema: {
          type: "object",
          properties: { verdict: { type: "string" } },
          required: ["verdict"],
        },
      },
    ],
  });
  const next = await agent.ok("get_next_step", { planId: created.planId });
  expect(next).toMatchObject({ status: "ready", step: { stepOrder: 3 } });

  await signIn(page, app.tenantA.email);
  await page.goto(`/plans/${created.planId}`);
  await expect(page.getByTestId("plan-pause")).toHaveCount(0);

  const search = page.getByTestId("step-2");
  await expect(search.getByTestId("server-step")).toHaveText("Run by Cairn: search_sources");
  await expect(page.getByTestId("step-1").getByTestId("server-step")).toHaveText(
    "Run by Cairn: store_research",
  );
  await search.getByText("Arguments (as written in the plan, with bindings)").click();
  const stored = search.getByTestId("step-arguments");
  await expect(stored).toBeVisible();
  await expect(stored.locator("mark.binding")).toHaveText("{{plan.researchQuestion}}");
  await search.getByText("Arguments Cairn ran it with").click();
  await expect(search.getByTestId("step-resolved-arguments")).toContainText(
    `"query": "${QUESTION}"`,
  );
  await search.getByText("Result", { exact: true }).click();
  await expect(search.getByText(/"title": "Cold climate heat pumps"/)).toBeVisible();

  // The agent step: no server marker; its inputs keep their bindings, its schema is shown.
  const analyze = page.getByTestId("step-3");
  await expect(analyze.getByTestId("server-step")).toHaveCount(0);
  await analyze.getByText(/^Inputs/).click();
  const inputs = analyze.getByTestId("step-inputs");
  await expect(inputs).toBeVisible();
  // jsonb keeps its own key order, so the bindings are compared as a set.
  expect((await inputs.locator("mark.binding").allTextContents()).sort()).toEqual([
    "{{steps.1.result.artifactId}}",
    "{{steps.2.result.results}}",
  ]);
  await analyze.getByText("Output schema").click();
  await expect(analyze.getByTestId("step-output-schema")).toContainText('"verdict"');

  // The flow: one binding edge per producing step into step 3, named for screen readers.
  const flow = page.getByRole("img", { name: /Flow of 3 steps with 0 branching conditions/ });
  await expect(flow).toHaveAccessibleName(/and 2 bindings between steps/);
  await expect(page.getByTestId("binding-edge")).toHaveCount(2);
  await expect(
    page.locator('[data-testid="binding-edge"][data-from="2"][data-to="3"]'),
  ).toHaveCount(1);
  await expect(
    page.locator('[data-testid="binding-edge"][data-from="1"][data-to="3"]'),
  ).toHaveCount(1);
  await expect(page.getByRole("list", { name: "Bindings between steps" })).toContainText(
    "Step 2's result feeds step 3's inputs: {{steps.2.result.results}}",
  );
  await keepScreenshot(page, "plan-server-steps");
});

test("a paused plan says why and how to go on, on its page and on the admin's Stalled page", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "Paused extraction",
    researchQuestion: "What does a heat pump cost?",
    steps: [
      {
        stepType: "extract",
        instructions: "Extract the price.",
        tool: "extract_data",
        arguments: {
          schema: { type: "object", properties: { price: { type: "number" } } },
          text: "A heat pump costs 9000 euros.",
        },
      },
      {
        stepType: "synthesize",
        instructions: "Write it up.",
        inputs: { price: "{{steps.1.result.price}}" },
      },
    ],
  });
  // No language model is configured in the tests, so Cairn's extract_data fails and the plan pauses.
  const paused = await agent.ok("get_next_step", { planId: created.planId });
  expect(paused.pauseReason).toMatchObject({ type: "tool_error", errorCode: "LLM_NOT_CONFIGURED" });
  const stepId = created.steps[0].stepId as string;

  await signIn(page, app.tenantA.email);
  await page.goto(`/plans/${created.planId}`);
  const notice = page.getByTestId("plan-pause");
  await expect(notice).toBeVisible();
  await expect(notice.getByRole("heading", { name: "Paused at step 1" })).toBeVisible();
  await expect(notice).toContainText("Cairn could not run step 1 (extract_data): the tool failed.");
  await expect(notice.getByTestId("pause-message")).toContainText("LLM_NOT_CONFIGURED");
  await expect(notice).toContainText("calling again will fail the same way");
  await expect(notice.getByTestId("pause-tool")).toHaveText("submit_step_result");
  const call = JSON.parse((await notice.getByTestId("pause-arguments").textContent()) ?? "");
  expect(call).toMatchObject({ planId: created.planId, stepId, result: {} });
  await expect(page.getByTestId("step-1").getByTestId("status")).toHaveText("Failed");
  await expect(
    page.locator('[data-testid="binding-edge"][data-from="1"][data-to="2"]'),
  ).toHaveCount(1);
  await keepScreenshot(page, "plan-paused");

  await page.getByRole("link", { name: "Stalled" }).click();
  const section = page.getByRole("region", { name: "Paused plans" });
  const card = section.getByTestId("paused-plan").filter({ hasText: "Paused extraction" });
  await expect(card).toContainText("Cairn could not run step 1 (extract_data): the tool failed.");
  await card.getByText("Reason and the call that unblocks it").click();
  await expect(card.getByTestId("pause-tool")).toHaveText("submit_step_result");
  await expect(card).toContainText("Step 1 failed (the reason above)");
  await expect(card.getByRole("button", { name: "Retry step 1" })).toBeVisible();
  // Listed once: as paused, not again among the stuck and failed steps.
  await expect(
    page.getByTestId("stalled-plan").filter({ hasText: "Paused extraction" }),
  ).toHaveCount(0);
  await keepScreenshot(page, "admin-paused");

  // The suggested call, with the result filled in, unblocks the plan and the notice goes.
  await agent.ok(paused.pauseReason.suggestedTool.name, {
    ...paused.pauseReason.suggestedTool.arguments,
    result: { price: 9000 },
  });
  await page.goto(`/plans/${created.planId}`);
  await expect(page.getByTestId("step-1").getByTestId("status")).toHaveText("Completed");
  await expect(page.getByTestId("plan-pause")).toHaveCount(0);
});
