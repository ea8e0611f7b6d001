import { expect, expectHydrated, signIn, test } from "./fixtures";
import { awaitingReview, planAtCheckpoint } from "./support/reviews";

/**
 * A review that needs two people's approval (docs/reviews.md, "Quorum"), in
 * the browser: the researcher's approval on the review panel counts 1 of 2
 * and the plan keeps waiting, their second click changes nothing, the admin
 * sees "1 of 2" and who approved in the inbox and completes it there; the
 * agent then moves on. Then a hand-over with a note from the review panel.
 */
test("two approvals: one person's waits, the second person's passes, each shown as k of N", async ({
  page,
  agent,
  app,
}) => {
  const created = await awaitingReview(
    agent,
    "Two approvals",
    { summary: "Shortlist of three heat pumps.", approvalsRequired: 2 },
    {
      researchQuestion: "Which heat pump?",
      steps: [
        { stepType: "checkpoint", instructions: "Show the shortlist." },
        { stepType: "synthesize", instructions: "Write the answer." },
      ],
    },
  );
  expect(created.requested.approvalsRequired).toBe(2);

  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${created.planId}`);
  await expectHydrated(page);
  const panel = page.getByTestId("review-panel");
  await expect(panel.getByTestId("review-approvals")).toContainText("0 of 2");
  await panel.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(
    "Your approval counts: 1 of 2. The review waits for 1 more.",
  );
  await expect(panel.getByTestId("review-approvals")).toContainText(
    `1 of 2 approvals (approved by`,
  );
  await expect(panel.getByTestId("review-approvals")).toContainText(app.tenantA.researcherEmail);
  // The same person's second click counts nothing more.
  await panel.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(/1 of 2/);
  const waiting = await agent.ok("get_next_step", { planId: created.planId });
  expect(waiting.status).toBe("awaiting_review");
  expect(waiting.review.approvals).toMatchObject({ count: 1, required: 2 });

  // The admin sees it in the inbox, and their approval completes it.
  await page.context().clearCookies();
  await signIn(page, app.tenantA.email);
  await page.goto("/inbox");
  const entry = page.getByTestId("inbox-review").filter({ hasText: "Two approvals" });
  await expect(entry.getByTestId("review-approvals")).toContainText("1 of 2");
  await expect(entry.getByTestId("review-approvals")).toContainText(app.tenantA.researcherEmail);
  await entry.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(/Approved: the step is complete/);
  await expect(entry).toHaveCount(0);
  const moved = await agent.ok("get_next_step", { planId: created.planId });
  expect(moved.step.stepId).toBe(created.steps[1].stepId);
});

test("hands a review over to a colleague with a note from the review panel", async ({
  page,
  agent,
  app,
}) => {
  const created = await awaitingReview(agent, "Hand over");
  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${created.planId}`);
  await expectHydrated(page);
  const panel = page.getByTestId("review-panel");
  await panel
    .getByLabel("Hand off to")
    .selectOption({ label: `Alpha Admin <${app.tenantA.email}>` });
  await panel.getByLabel("Note").fill("You know the vendor.");
  await panel.getByRole("button", { name: "Hand off" }).click();
  await expect(panel.getByTestId("assign-message")).toHaveText(
    `Handed over to ${app.tenantA.email}, who has been notified.`,
  );
  await expect(panel.getByTestId("review-assignee")).toHaveText(/Alpha Admin/);
  // The trail on the same page records the hand-over.
  await page.reload();
  await expect(page.getByTestId("audit-trail")).toContainText("You know the vendor.");
});

test("an admin sets the team's approvals on /admin, which a review asks no fewer than", async ({
  page,
  agent,
  app,
}) => {
  await signIn(page, app.tenantA.email);
  await page.goto("/admin");
  const form = page.getByTestId("review-quorum");
  await form.getByLabel(/Approvals a review needs/).fill("2");
  await form.getByRole("button", { name: "Save approvals" }).click();
  await expect(form.getByTestId("action-message")).toContainText("need 2 people's approvals");
  try {
    const { planId, stepId } = await planAtCheckpoint(agent, "Team quorum");
    const refused = await agent.fails("request_user_review", {
      planId,
      stepId,
      summary: "One is enough?",
      approvalsRequired: 1,
    });
    expect(refused).toContain("need at least 2");
    const review = await agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "Please check.",
    });
    expect(review.approvalsRequired).toBe(2);
    // The change is on the team's trail.
    await page.reload();
    await expect(page.getByTestId("team-trail")).toContainText("2 people's approvals");
  } finally {
    await form.getByLabel(/Approvals a review needs/).fill("1");
    await form.getByRole("button", { name: "Save approvals" }).click();
    await expect(form.getByTestId("action-message")).toContainText("one person's approval");
  }
  // Out of range: a clear message, nothing saved.
  await form.getByLabel(/Approvals a review needs/).fill("11");
  await form.getByRole("button", { name: "Save approvals" }).click();
  await expect(form.getByTestId("action-message")).toHaveText(/10/);
});
