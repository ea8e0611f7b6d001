import { expect, expectHydrated, report, signIn, test } from "./fixtures";

// A plan's History section and "Fork from here" (docs/history-and-forks.md).

test("a plan changed three times shows its revisions with their diffs, a page at a time", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "History in the browser",
    researchQuestion: "How did this plan change?",
    steps: [
      { stepType: "search", instructions: "Find heat pump studies." },
      { stepType: "analyze", instructions: "Compare by efficiency." },
    ],
  });
  const planId = created.planId as string;
  const analyze = created.steps[1].stepId as string;
  for (const [i, instructions] of ["Compare by cost.", "Compare by cost and noise."].entries()) {
    await agent.ok("modify_plan", {
      planId,
      action: "update_step_instructions",
      stepId: analyze,
      instructions,
      modificationRationale: `Change ${i + 1}`,
    });
  }
  await agent.ok("modify_plan", {
    planId,
    action: "add_steps",
    steps: [{ stepType: "synthesize", instructions: "Write it up." }],
    modificationRationale: "A write-up at the end.",
  });
  await signIn(page, app.tenantA.email);
  await page.goto(`/plans/${planId}`);
  const history = page.getByTestId("plan-history");
  const revisions = history.getByTestId("revision");
  await expect(revisions).toHaveCount(4);
  await expect(revisions.first()).toHaveAttribute("data-revision", "4");
  await expect(revisions.first()).toContainText("add_steps");
  await expect(revisions.first()).toContainText("Added step 3 (synthesize)");
  await expect(revisions.first().getByTestId("revision-rationale")).toHaveText(
    "A write-up at the end.",
  );
  await expect(revisions.nth(1)).toContainText(
    "Step 2 instructions: Compare by cost. → Compare by cost and noise.",
  );
  await expect(revisions.last()).toContainText("created");
  await expect(page.getByTestId("history-pages")).toHaveCount(0);

  // More than a page: the rest behind "Older →".
  for (let i = 0; i < 8; i += 1) {
    await agent.ok("modify_plan", {
      planId,
      action: "update_step_instructions",
      stepId: analyze,
      instructions: `Version ${i}`,
      modificationRationale: `More ${i}`,
    });
  }
  await page.goto(`/plans/${planId}`);
  await expect(revisions).toHaveCount(10);
  await page.getByTestId("history-next").click();
  await expect(page).toHaveURL(/history=/);
  await expect(revisions).toHaveCount(2);
  await expect(revisions.last()).toHaveAttribute("data-revision", "1");
});

test("Fork from here opens the steps' edits in a form, and the fork carries step 1 and links its source", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "Fork in the browser",
    researchQuestion: "Is it worth it by cost?",
    steps: [
      { stepType: "search", instructions: "Find heat pump studies." },
      { stepType: "analyze", instructions: "Compare by efficiency." },
    ],
  });
  const planId = created.planId as string;
  const first = await agent.ok("get_next_step", { planId });
  await agent.ok("submit_step_result", {
    planId,
    stepId: first.step.stepId,
    result: { studies: 4 },
    resultSummary: "Four studies found.",
    stepExecutionReport: report,
  });
  await signIn(page, app.tenantA.email);
  await page.goto(`/plans/${planId}`);
  await page.getByTestId("step-2").getByTestId("fork-from-here").click();
  await expect(page.getByRole("heading", { name: "Fork from step 2" })).toBeVisible();
  await expectHydrated(page);
  const form = page.getByTestId("fork-form");
  await expect(form.getByTestId("fork-step-1")).toHaveCount(0);
  await form.getByLabel("Name of the new plan").fill("Fork by cost");
  await form.getByTestId("fork-step-2").getByLabel("Instructions").fill("Compare by cost.");
  await form.getByRole("button", { name: "Fork the plan" }).click();

  await expect(page.getByRole("heading", { name: "Fork by cost" })).toBeVisible();
  await expect(page.getByTestId("forked-from")).toHaveText("Fork in the browser");
  await expect(page.getByTestId("step-1").getByTestId("step-carried")).toBeVisible();
  await expect(page.getByTestId("step-1")).toContainText("Four studies found.");
  await expect(page.getByTestId("step-2")).toContainText("Compare by cost.");
  const forkUrl = page.url();
  const forkId = forkUrl.split("/plans/")[1] ?? "";
  const next = await agent.ok("get_next_step", { planId: forkId });
  expect(next.step).toMatchObject({ stepOrder: 2, instructions: "Compare by cost." });

  await page.getByTestId("forked-from").click();
  await expect(page.getByTestId("fork-link")).toHaveText("Fork by cost");
  await expect(page.getByTestId("step-2")).toContainText("Compare by efficiency.");
});

test("an admin forks the team's failed plans from their failed step in one action, and once", async ({
  page,
  agent,
  app,
}) => {
  // The worker's database holds other specs' failed plans: the text filter picks these.
  const tag = `Bulk fork ${Date.now()}`;
  for (const n of [1, 2]) {
    const created = await agent.ok("create_research_plan", {
      name: `${tag} #${n}`,
      researchQuestion: "Is it worth it?",
      steps: [
        { stepType: "search", instructions: "Find heat pump studies." },
        { stepType: "analyze", instructions: "Compare by cost." },
      ],
    });
    const planId = created.planId as string;
    const first = await agent.ok("get_next_step", { planId });
    await agent.ok("submit_step_result", {
      planId,
      stepId: first.step.stepId,
      result: { studies: n },
      resultSummary: `${n} studies found.`,
      stepExecutionReport: report,
    });
    const second = await agent.ok("get_next_step", { planId });
    await agent.ok("modify_plan", {
      planId,
      action: "fail_step",
      stepId: second.step.stepId,
      reason: "The sources disagree.",
      modificationRationale: "Cannot go on.",
    });
  }
  await signIn(page, app.tenantA.email);
  await page.goto("/admin/failed");
  await page.getByLabel("Text", { exact: true }).fill(tag);
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/text=/);
  await expect(page.getByTestId("failed-count")).toHaveText("2 failed plans match.");
  const rows = page.getByTestId("failed-plan");
  await expect(rows).toHaveCount(2);
  await expect(rows.first().getByTestId("failed-step")).toHaveText(
    "Step 2 (analyze): The sources disagree.",
  );
  await expectHydrated(page);
  await page.getByRole("button", { name: "Fork these 2 plans from their failed step" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(
    "Forked 2 plans from their failed step.",
  );
  const links = page.getByTestId("action-item").getByRole("link");
  await expect(links).toHaveCount(2);
  await expect(links.first()).toContainText(`(fork): forked from step 2 of ${tag}`);
  // Forked once: the preview matches them no more, and offers no second action.
  await expect(page.getByTestId("failed-count")).toHaveText("0 failed plans match.");
  await expect(page.getByRole("button", { name: /Fork/ })).toHaveCount(0);

  await links.first().click();
  await expect(page.getByTestId("forked-from")).toContainText(tag);
  await expect(page.getByTestId("step-1").getByTestId("step-carried")).toBeVisible();
  await expect(page.getByTestId("step-2")).toContainText("Compare by cost.");
});
