import { expect, keepScreenshot, NOT_FOUND, STALL_SECONDS, signIn, test } from "./fixtures";

test("an admin sees a stalled plan and fails, then retries, its step", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "Stuck research",
    researchQuestion: "Will the agent come back?",
    steps: [
      { stepType: "search", instructions: "Search slowly." },
      { stepType: "analyze", instructions: "Analyze." },
    ],
  });
  const first = await agent.ok("get_next_step", { planId: created.planId });
  await new Promise((resolve) => setTimeout(resolve, (STALL_SECONDS + 1) * 1000));

  await signIn(page, app.tenantA.email);
  await page.goto("/plans?filter=stalled");
  await expect(page.getByRole("link", { name: "Stuck research" })).toBeVisible();
  await expect(page.getByTestId("stall-warning").first()).toContainText("Step 1 in progress for");

  await page.goto(`/plans/${created.planId}`);
  await expect(page.getByTestId("step-stall")).toContainText(`stall threshold ${STALL_SECONDS} s`);

  await page.getByRole("link", { name: "Stalled" }).click();
  const card = page.getByTestId("stalled-plan").filter({ hasText: "Stuck research" });
  await expect(card).toContainText("Step 1 in progress for");
  await keepScreenshot(page, "admin-stalled");
  await card.getByRole("button", { name: "Fail step 1" }).click();
  await expect(page.getByTestId("recovery-done")).toHaveText(
    "Step failed; the plan is now executing.",
  );
  const status = await agent.ok("get_plan_status", { planId: created.planId });
  expect(status.steps[0]).toMatchObject({ stepId: first.step.stepId, status: "failed" });

  // Still listed, now for its failed step, which can be retried.
  const failed = page.getByTestId("stalled-plan").filter({ hasText: "Stuck research" });
  await expect(failed).toContainText("Step 1 failed: Stalled: failed by an admin.");
  await failed.getByRole("button", { name: "Retry step 1" }).click();
  await expect(page.getByTestId("recovery-done")).toHaveText(
    "Step set back to pending; the plan is now executing.",
  );
  await expect(page.getByTestId("stalled-plan").filter({ hasText: "Stuck research" })).toHaveCount(
    0,
  );
  const after = await agent.ok("get_plan_status", { planId: created.planId });
  expect(after.steps[0].status).toBe("pending");
  expect((await agent.ok("get_next_step", { planId: created.planId })).step.stepId).toBe(
    first.step.stepId,
  );
});

test("an admin is asked before failing a plan's last open step, and cancels a stalled plan", async ({
  page,
  agent,
  app,
}) => {
  const last = await agent.ok("create_research_plan", {
    name: "One step left",
    researchQuestion: "Does failing it end the plan?",
    steps: [{ stepType: "search", instructions: "Search." }],
  });
  const abandoned = await agent.ok("create_research_plan", {
    name: "Abandoned research",
    researchQuestion: "Will anyone finish it?",
    steps: [
      { stepType: "search", instructions: "Search." },
      { stepType: "analyze", instructions: "Analyze." },
    ],
  });
  await agent.ok("get_next_step", { planId: last.planId });
  await agent.ok("get_next_step", { planId: abandoned.planId });
  await new Promise((resolve) => setTimeout(resolve, (STALL_SECONDS + 1) * 1000));

  await signIn(page, app.tenantA.email);
  await page.goto("/admin/stalled");
  const card = page.getByTestId("stalled-plan").filter({ hasText: "One step left" });
  await expect(card.getByTestId("fail-ends-plan")).toContainText("failing it ends the plan");
  // The browser holds the form until the admin confirms.
  await card.getByRole("button", { name: "Fail step 1" }).click();
  await expect(page.getByTestId("recovery-done")).toHaveCount(0);
  await card.getByRole("checkbox").check();
  await card.getByRole("button", { name: "Fail step 1" }).click();
  await expect(page.getByTestId("recovery-done")).toHaveText(
    "Step failed; the plan is now completed.",
  );

  const other = page.getByTestId("stalled-plan").filter({ hasText: "Abandoned research" });
  await other.getByText("Cancel plan…").click();
  await other.getByRole("textbox").fill("Nobody needs this any more.");
  await other.getByRole("button", { name: "Cancel this plan" }).click();
  await expect(
    page.getByTestId("stalled-plan").filter({ hasText: "Abandoned research" }),
  ).toHaveCount(0);
  expect(await agent.ok("get_next_step", { planId: abandoned.planId })).toMatchObject({
    status: "plan_cancelled",
    cancellation: { reason: "Nobody needs this any more." },
  });
  await page.goto(`/plans/${abandoned.planId}`);
  await expect(page.getByTestId("plan-cancelled")).toContainText("Nobody needs this any more.");
});

test("admins see the tool-call log with per-tool statistics", async ({ page, agent, app }) => {
  await agent.ok("list_active_plans");
  await agent.fails("get_next_step", { planId: "nope" });
  await signIn(page, app.tenantA.email);
  await page.goto("/admin/tool-calls");
  await expect(page.getByTestId("tool-stats")).toContainText("list_active_plans");
  await page.getByLabel("Errors").selectOption("only");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/errors=only/);
  const calls = page.getByTestId("tool-calls");
  await expect(calls).toContainText("VALIDATION_ERROR");
  // With the text the agent got, not only its code.
  await expect(calls.getByTestId("tool-call-error").first()).toContainText("planId");
  await expect(calls).not.toContainText("list_active_plans");
  await keepScreenshot(page, "admin-tool-calls");
});

test("a researcher cannot open admin pages", async ({ page, app, allowConsoleError }) => {
  await signIn(page, app.tenantA.researcherEmail);
  allowConsoleError(NOT_FOUND);
  await expect(page.getByRole("link", { name: "Stalled" })).toHaveCount(0);
  for (const path of ["/admin/stalled", "/admin/failed", "/admin/tool-calls", "/admin/users"]) {
    const response = await page.goto(path);
    expect(response?.status(), path).toBe(404);
  }
});
