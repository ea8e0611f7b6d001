import {
  expect,
  expectHydrated,
  keepScreenshot,
  planAwaitingReview,
  report,
  signIn,
  test,
} from "./fixtures";

test("modify with feedback, then approve: the agent sees the feedback and the plan completes", async ({
  page,
  agent,
  app,
}) => {
  const plan = await planAwaitingReview(agent, "Heat pumps");
  await signIn(page, app.tenantA.researcherEmail);

  await expect(page.getByTestId("inbox")).toContainText(/[1-9]/);
  await page.getByTestId("inbox").click();
  await page.getByRole("link", { name: "Heat pumps", exact: true }).click();
  const panel = page.getByTestId("review-panel");
  await expect(panel).toBeVisible();
  await expect(page.getByTestId("review-summary")).toHaveText(
    "Found 4 sources on Heat pumps. Should I go deeper on costs?",
  );
  await keepScreenshot(page, "plan-review-panel");
  // The page's own check runs once React has hydrated it (before, the server refuses).
  await expectHydrated(page);

  // Modify without feedback is refused in the page; with feedback it goes through.
  await panel.getByRole("button", { name: "Modify with feedback" }).click();
  await expect(panel.getByRole("alert")).toContainText("Write the feedback");
  await panel.getByLabel(/Feedback/).fill("Include 2024 prices from two sources.");
  await panel.getByRole("button", { name: "Modify with feedback" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(/Sent back with your feedback/);
  // Until an agent picks it up again, the step says so, with no new start time.
  await page.reload();
  const sentBack = page.getByTestId("step-1");
  await expect(sentBack.getByTestId("status")).toHaveText("Sent back");
  await expect(sentBack.getByTestId("step-sent-back")).toBeVisible();
  await expect(sentBack.locator("dt:text-is('Started') + dd")).toHaveText("—");
  // The flow and the timeline agree: the step waits, it is not running since the modify.
  const flowNode = page.locator(".flow-node title").first();
  await expect(flowNode).toHaveText("Step 1 (checkpoint): sent back");
  await expect(page.getByText("No step has started yet.")).toBeVisible();

  const context = await agent.ok("get_research_context", {
    planId: plan.planId,
    sessionId: "agent-2",
  });
  const step = context.steps.find((s: { stepId: string }) => s.stepId === plan.stepId);
  expect(step?.status).toBe("in_progress");
  expect(step?.instructions).toContain(
    "\n\n---\n\nUser feedback: Include 2024 prices from two sources.",
  );
  // The agent's next pull hands the step back first, with the feedback, as the page promised.
  const redo = await agent.ok("get_next_step", { planId: plan.planId });
  expect(redo.step).toMatchObject({ stepId: plan.stepId, attempt: 2 });
  expect(redo.step.instructions).toContain("User feedback: Include 2024 prices from two sources.");
  await page.reload();
  await expect(sentBack.getByTestId("status")).toHaveText("In progress");
  await expect(sentBack.locator("dt:text-is('Started') + dd")).not.toHaveText("—");
  await expect(flowNode).toHaveText("Step 1 (checkpoint): in progress");

  await agent.ok("request_user_review", {
    planId: plan.planId,
    stepId: plan.stepId,
    summary: "Added 2024 prices.",
  });
  await page.reload();
  await expect(page.getByTestId("user-feedback")).toContainText(
    "Include 2024 prices from two sources.",
  );
  await expect(page.getByTestId("review-summary")).toHaveText("Added 2024 prices.");
  await page.getByTestId("review-panel").getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(/Approved/);

  const next = await agent.ok("get_next_step", { planId: plan.planId });
  expect(next.step.stepId).toBe(plan.secondStepId);
  await agent.ok("submit_step_result", {
    planId: plan.planId,
    stepId: plan.secondStepId,
    result: { answer: "Yes, with caveats." },
    resultSummary: "Worth it above -10 °C.",
    confidence: 0.8,
    stepExecutionReport: report,
  });
  expect((await agent.ok("get_next_step", { planId: plan.planId })).status).toBe("plan_complete");

  await page.reload();
  await expect(page.locator(".plan-header").getByTestId("status")).toHaveText("Completed");
  const audit = page.getByTestId("audit-trail");
  const rows = audit.locator("tbody tr");
  const texts = await rows.allInnerTexts();
  const joined = texts.join("\n");
  expect(joined).toContain("user_reviewed · decision");
  expect(joined).toContain("Alpha Researcher <alpha-researcher@example.com>");
  expect(joined).toContain('key "Alpha agent" of alpha@example.com');
  expect(joined).toContain("session_resumed");
  expect(joined).toContain("step_completed");
  // Newest first: the plan's creation is the last row.
  expect(texts.at(-1)).toContain("plan_modified · created");
  await keepScreenshot(page, "plan-completed");
});

test("reject asks to confirm and fails the plan; skip skips the step", async ({
  page,
  agent,
  app,
}) => {
  const rejected = await planAwaitingReview(agent, "Rejected topic");
  const skipped = await planAwaitingReview(agent, "Skipped topic");
  await signIn(page, app.tenantA.researcherEmail);

  await page.goto(`/plans/${rejected.planId}`);
  const panel = page.getByTestId("review-panel");
  await panel.getByRole("button", { name: "Reject…" }).click();
  await panel.getByRole("button", { name: "Cancel" }).click();
  await expect(panel.getByRole("button", { name: /Confirm reject/ })).toHaveCount(0);
  await panel.getByRole("button", { name: "Reject…" }).click();
  await panel.getByRole("button", { name: /Confirm reject/ }).click();
  await expect(page.getByTestId("action-message")).toHaveText(/Rejected/);
  await expect(page.locator(".plan-header").getByTestId("status")).toHaveText("Failed");
  // The rejected checkpoint failed and its plan ended: nothing counts as done.
  await expect(page.locator(".plan-header").getByTestId("progress-text")).toHaveText(
    "0/2 steps done · 1 failed",
  );
  expect((await agent.ok("get_next_step", { planId: rejected.planId })).status).toBe("plan_failed");

  await page.goto(`/plans/${skipped.planId}`);
  await page.getByTestId("review-panel").getByRole("button", { name: "Skip step" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(/Skipped/);
  await expect(page.getByTestId("step-1").getByTestId("status")).toHaveText("Skipped");
  await expect(page.locator(".plan-header").getByTestId("progress-text")).toHaveText(
    "0/2 steps done · 1 skipped",
  );
  const next = await agent.ok("get_next_step", { planId: skipped.planId });
  expect(next.step.stepId).toBe(skipped.secondStepId);
});

test("a decision on a review the agent already answered says so plainly and changes nothing", async ({
  page,
  agent,
  app,
}) => {
  const plan = await planAwaitingReview(agent, "Race");
  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${plan.planId}`);
  const panel = page.getByTestId("review-panel");
  await expect(panel).toBeVisible();
  await panel.getByLabel(/Feedback/).fill("I was typing this…");

  // The user answered in the chat and the agent recorded it first.
  await agent.ok("submit_user_decision", {
    planId: plan.planId,
    reviewRequestId: plan.reviewRequestId,
    decision: "approve",
  });

  await panel.getByRole("button", { name: "Skip step" }).click();
  const message = page.getByTestId("action-message");
  await expect(message).toContainText(
    "The plan is no longer waiting for a decision: it is executing",
  );
  await expect(message).toContainText("nothing was changed");
  await expect(page.getByTestId("current-state")).toContainText("executing");
  const context = await agent.ok("get_research_context", { planId: plan.planId });
  expect(context.steps[0].status).toBe("completed");
  expect(context.reviews[0].decision.decision).toBe("approve");
});

test("the page refreshes itself without losing what the reviewer types", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "Live plan",
    researchQuestion: "Does the page follow along?",
    steps: [
      { stepType: "search", instructions: "Search." },
      { stepType: "checkpoint", instructions: "Review." },
    ],
  });
  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${created.planId}`);
  await expect(page.getByTestId("step-1").getByTestId("status")).toHaveText("Pending");

  const first = await agent.ok("get_next_step", { planId: created.planId });
  await expect(page.getByTestId("step-1").getByTestId("status")).toHaveText("In progress");
  await agent.ok("submit_step_result", {
    planId: created.planId,
    stepId: first.step.stepId,
    result: { found: 3 },
    stepExecutionReport: report,
  });
  const second = await agent.ok("get_next_step", { planId: created.planId });
  await agent.ok("request_user_review", {
    planId: created.planId,
    stepId: second.step.stepId,
    summary: "Look.",
  });
  const panel = page.getByTestId("review-panel");
  await expect(panel).toBeVisible();
  await panel.getByLabel(/Feedback/).fill("Half-written thought");
  // Wait through at least one refresh; the text must survive it.
  await page.waitForTimeout(5_000);
  await expect(panel.getByLabel(/Feedback/)).toHaveValue("Half-written thought");
});

test("a review asked again gets a fresh form: what was typed or armed for the old one is not sent", async ({
  page,
  agent,
  app,
  context,
}) => {
  const plan = await planAwaitingReview(agent, "Asked again");
  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${plan.planId}`);
  const panel = page.getByTestId("review-panel");
  await panel.getByLabel(/Feedback/).fill("Meant for the first review");
  await panel.getByRole("button", { name: "Reject…" }).click();
  const confirmReject = panel.getByRole("button", { name: "Confirm reject: fail the plan" });
  await expect(confirmReject).toBeVisible();

  // The reviewer's tab goes to the background (its refresh waits while hidden), and
  // in another tab the review is sent back; the agent redoes the step and asks again.
  await page.evaluate(() =>
    Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true }),
  );
  const other = await context.newPage();
  await other.goto(`/plans/${plan.planId}`);
  const otherPanel = other.getByTestId("review-panel");
  await otherPanel.getByLabel(/Feedback/).fill("Add 2024 prices.");
  await otherPanel.getByRole("button", { name: "Modify with feedback" }).click();
  await expect(other.getByTestId("action-message")).toHaveText(/Sent back with your feedback/);
  await other.close();
  await agent.ok("get_next_step", { planId: plan.planId });
  const again = await agent.ok("request_user_review", {
    planId: plan.planId,
    stepId: plan.stepId,
    summary: "Added 2024 prices.",
  });
  await expect(panel.getByTestId("review-summary")).toHaveText(
    "Found 4 sources on Asked again. Should I go deeper on costs?",
  );

  // Back in the reviewer's tab, the page's own refresh brings the new review: a fresh form.
  await page.evaluate(() => Reflect.deleteProperty(document, "visibilityState"));
  await expect(panel.getByTestId("review-summary")).toHaveText("Added 2024 prices.", {
    timeout: 15_000,
  });
  await expect(panel.getByLabel(/Feedback/)).toHaveValue("");
  await expect(confirmReject).toHaveCount(0);
  await expect(panel.getByRole("button", { name: "Reject…" })).toBeVisible();
  const decisionForm = panel.locator("form", { has: page.locator('textarea[name="feedback"]') });
  await expect(decisionForm.locator('input[name="reviewRequestId"]')).toHaveValue(
    again.reviewRequestId,
  );
  await expect(decisionForm.locator('input[name="contentDigest"]')).toHaveValue(
    again.contentDigest,
  );

  await panel.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(/Approved/);
  const { reviews } = await agent.ok("get_research_context", { planId: plan.planId });
  const decided = (id: string) =>
    reviews.find((review: { reviewRequestId: string }) => review.reviewRequestId === id)?.decision;
  expect(decided(plan.reviewRequestId)).toMatchObject({
    decision: "modify",
    feedback: "Add 2024 prices.",
  });
  expect(decided(again.reviewRequestId)).toMatchObject({ decision: "approve", feedback: null });
  expect(reviews).toHaveLength(2);
});

test("a checkpoint with no proposal under an output schema: the reviewer enters the result, checked on the server", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "Sign-off",
    researchQuestion: "Does the finding hold?",
    steps: [
      {
        stepType: "checkpoint",
        instructions: "Sign off on the finding.",
        outputSchema: {
          type: "object",
          required: ["verdict", "signedOffBy"],
          properties: { verdict: { enum: ["holds", "fails"] }, signedOffBy: { type: "string" } },
        },
      },
      { stepType: "synthesize", instructions: "Write the answer." },
    ],
  });
  const planId: string = created.planId;
  const next = await agent.ok("get_next_step", { planId });
  await agent.ok("request_user_review", {
    planId,
    stepId: next.step.stepId,
    summary: "I cannot sign off myself: please enter the verdict.",
  });
  await signIn(page, app.tenantA.researcherEmail);

  // The inbox offers the same field.
  await page.goto(`/inbox?plan=${planId}`);
  await expect(page.getByTestId("review-result")).toHaveCount(1);

  await page.goto(`/plans/${planId}`);
  const panel = page.getByTestId("review-panel");
  await expect(panel.getByTestId("review-proposal")).toContainText(
    "enter the result in the Result field",
  );
  await panel.getByTestId("review-result-schema").locator("summary").click();
  await expect(panel.getByTestId("review-result-schema-json")).toContainText("signedOffBy");
  await expectHydrated(page);
  const message = page.getByTestId("action-message");
  const result = panel.getByLabel(/^Result/);

  await panel.getByRole("button", { name: "Approve" }).click();
  await expect(message).toContainText("result: step 1 has an outputSchema");
  await result.fill("{verdict: holds");
  await panel.getByRole("button", { name: "Approve" }).click();
  await expect(message).toContainText("result: is not valid JSON");
  await result.fill('{"verdict": "maybe"}');
  await panel.getByRole("button", { name: "Approve" }).click();
  await expect(message).toContainText("result does not satisfy the step's outputSchema");
  await expect(message).toContainText("signedOffBy");
  // What was typed stays to be corrected, and nothing changed meanwhile.
  await expect(result).toHaveValue('{"verdict": "maybe"}');
  expect((await agent.ok("get_plan_status", { planId })).status).toBe("awaiting_review");

  await result.fill('{"verdict": "holds", "signedOffBy": "Ada"}');
  await panel.getByRole("button", { name: "Approve" }).click();
  await expect(message).toHaveText(/Approved: the step is complete/);
  const context = await agent.ok("get_research_context", { planId });
  expect(context.steps[0]).toMatchObject({
    status: "completed",
    result: { verdict: "holds", signedOffBy: "Ada" },
  });
});
