/**
 * Checkpoints a person can trust, in a browser (docs/reviews.md, docs/audit.md):
 * the reproduction (a confidence gate, Approve in the UI) leaves the plan
 * running and both doors agree; with "people only" the agent's decision is
 * refused with the review link while the person's goes through; and a trail
 * edited in the database is flagged on the plan page.
 */
import { readFileSync } from "node:fs";
import { sql } from "drizzle-orm";
import { expect, keepScreenshot, report, signIn, test } from "./fixtures";

async function gatedPlanAtReview(
  agent: Parameters<Parameters<typeof test>[2]>[0]["agent"],
  name: string,
  proposal: Record<string, unknown> = {},
) {
  const created = await agent.ok("create_research_plan", {
    name,
    researchQuestion: "q",
    steps: [
      { stepType: "search", instructions: "Find sources." },
      { stepType: "synthesize", instructions: "Write it up." },
    ],
    branchingConditions: [
      { afterStepOrder: 1, conditionExpression: "confidence < 0.5", ifTrueAction: "fail" },
    ],
  });
  const next = await agent.ok("get_next_step", { planId: created.planId });
  const review = await agent.ok("request_user_review", {
    planId: created.planId,
    stepId: next.step.stepId,
    summary: "Three sources found.",
    ...proposal,
  });
  return { planId: created.planId as string, review, secondStepId: created.steps[1].stepId };
}

test("an approve with no proposal fires no gate: the UI and MCP report the plan running", async ({
  page,
  agent,
  app,
}) => {
  const plan = await gatedPlanAtReview(agent, "Gate on approve");
  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${plan.planId}`);
  const panel = page.getByTestId("review-panel");
  await expect(panel.getByTestId("review-proposal")).toContainText("proposed no result");
  // Step 2 is still to do: this decision does not end the plan.
  await expect(panel.getByTestId("review-ends-plan")).toHaveCount(0);
  await panel.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(
    "Approved: the step is complete. The plan continues.",
  );
  expect((await agent.ok("get_plan_status", { planId: plan.planId })).status).toBe("executing");
  await page.reload();
  await expect(page.locator(".plan-header").getByTestId("status")).toHaveText("Executing");
  await expect(page.getByTestId("decision-channel")).toContainText("in Cairn");
});

test("an approve of a low-confidence proposal says the condition failed the plan", async ({
  page,
  agent,
  app,
}) => {
  const plan = await gatedPlanAtReview(agent, "Low confidence", {
    proposedResult: { sources: 1 },
    proposedConfidence: 0.2,
  });
  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${plan.planId}`);
  const panel = page.getByTestId("review-panel");
  await expect(panel.getByTestId("review-proposal-field").locator("dt")).toHaveText(["sources"]);
  await expect(panel.getByTestId("review-proposal-json")).toHaveText("1");
  await expect(panel.getByTestId("review-proposal")).toContainText("confidence: 0.2");
  await keepScreenshot(page, "review-panel-with-proposal");
  await panel.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(
    "Approved: the step is complete, and a branching condition failed the plan.",
  );
  expect((await agent.ok("get_plan_status", { planId: plan.planId })).status).toBe("failed");
});

test("with people only, the agent is refused with the review link and the person decides", async ({
  page,
  agent,
  app,
}) => {
  await signIn(page, app.tenantA.email);
  await page.goto("/admin");
  const form = page.getByTestId("decision-policy-form");
  await form.getByLabel(/People only/).check();
  await form.getByRole("button", { name: "Save who decides" }).click();
  await expect(form.getByTestId("action-message")).toContainText("only people decide");
  try {
    const plan = await gatedPlanAtReview(agent, "People only");
    expect(plan.review.decisionPolicy).toBe("people_only");
    const refused = await agent.fails("submit_user_decision", {
      planId: plan.planId,
      reviewRequestId: plan.review.reviewRequestId,
      decision: "approve",
    });
    expect(refused).toMatch(/^FORBIDDEN: This team lets only people decide checkpoints/);
    expect(refused).toContain(`/plans/${plan.planId}#review`);

    await page.goto(`/plans/${plan.planId}`);
    await expect(page.getByTestId("decision-policy")).toContainText("Only people decide");
    await page.getByTestId("review-panel").getByRole("button", { name: "Skip step" }).click();
    await expect(page.getByTestId("action-message")).toHaveText(
      "Skipped: the step will not run. The plan continues.",
    );
    const next = await agent.ok("get_next_step", { planId: plan.planId });
    expect(next.step.stepId).toBe(plan.secondStepId);
    await page.goto("/inbox");
    await expect(page.getByTestId("recent-decisions")).toContainText(
      "skip by Alpha Admin <alpha@example.com> in Cairn",
    );
  } finally {
    await page.goto("/admin");
    await form.getByLabel(/People, and agents/).check();
    await form.getByRole("button", { name: "Save who decides" }).click();
    await expect(form.getByTestId("action-message")).toContainText("agents may relay");
  }
});

test("a relayed decision is marked as relayed; an edited trail is flagged on the plan page", async ({
  page,
  agent,
  app,
}) => {
  const plan = await gatedPlanAtReview(agent, "Relayed");
  await agent.ok("submit_user_decision", {
    planId: plan.planId,
    reviewRequestId: plan.review.reviewRequestId,
    contentDigest: plan.review.contentDigest,
    decision: "approve",
  });
  await agent.ok("get_next_step", { planId: plan.planId });
  await agent.ok("submit_step_result", {
    planId: plan.planId,
    stepId: plan.secondStepId,
    result: { answer: "done" },
    stepExecutionReport: report,
  });
  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${plan.planId}`);
  await expect(page.getByTestId("decision-channel")).toContainText(
    'relayed by key "Alpha agent" of alpha@example.com',
  );
  await expect(page.getByTestId("trail-integrity")).toHaveAttribute("data-verified", "true");
  // The relayed decision signed the head in its transaction (a signing pass may have signed the rest since).
  await expect(page.getByTestId("trail-integrity")).toContainText(/signed with key [0-9a-f]{16}/);
  const download = page.waitForEvent("download");
  await page.getByRole("link", { name: /Export the trail/ }).click();
  const exported = JSON.parse(readFileSync(await (await download).path(), "utf8"));
  expect(exported.verification.verified).toBe(true);
  // The fields shown are what each digest covers, to the microsecond, and the head is the last row.
  for (const row of exported.rows) {
    expect(row.createdAt).toBe(JSON.parse(row.canonical)[8]);
    expect(row.createdAt).toMatch(/\.\d{6}Z$/);
  }
  expect(exported.head).toEqual({
    chainLength: exported.rows.length,
    lastDigest: exported.rows.at(-1).digest,
  });

  // Someone with database access rewrites who decided.
  const handle = await app.openDatabase();
  try {
    await handle.db.execute(
      sql`update plan_audit_log set actor_label = 'Alpha Admin'
        where plan_id = ${plan.planId}::uuid and payload->>'action' = 'decision'`,
    );
  } finally {
    await handle.close();
  }
  await page.reload();
  const integrity = page.getByTestId("trail-integrity");
  await expect(integrity).toHaveAttribute("data-verified", "false");
  await expect(integrity).toContainText("The audit trail does not verify: row");
  await expect(integrity).toContainText("changed after it was written");
});

test("a decision that ends the plan says so before and after", async ({ page, agent, app }) => {
  const created = await agent.ok("create_research_plan", {
    name: "Last step",
    researchQuestion: "q",
    steps: [{ stepType: "checkpoint", instructions: "Show what was found." }],
  });
  const next = await agent.ok("get_next_step", { planId: created.planId });
  await agent.ok("request_user_review", {
    planId: created.planId,
    stepId: next.step.stepId,
    summary: "All done?",
  });
  await signIn(page, app.tenantA.researcherEmail);
  await page.goto(`/plans/${created.planId}`);
  const panel = page.getByTestId("review-panel");
  await expect(panel.getByTestId("review-ends-plan")).toContainText(
    "approving or skipping it completes the plan",
  );
  await panel.getByRole("button", { name: "Skip step" }).click();
  await expect(page.getByTestId("action-message")).toHaveText(
    "Skipped: the step will not run. That was the last open step: the plan is complete.",
  );
  expect((await agent.ok("get_plan_status", { planId: created.planId })).status).toBe("completed");
});

test("a switch to people only replaces an agent's approve deadline, and the team's trail says so", async ({
  page,
  agent,
  app,
}) => {
  const created = await agent.ok("create_research_plan", {
    name: "Deadline switch",
    researchQuestion: "Does the deadline hold?",
    steps: [{ stepType: "checkpoint", instructions: "Present the sources for review." }],
  });
  const planId: string = created.planId;
  const next = await agent.ok("get_next_step", { planId });
  const asked = await agent.ok("request_user_review", {
    planId,
    stepId: next.step.stepId,
    summary: "Approve me in an hour.",
    deadlineSeconds: 3600,
    onTimeout: "approve",
  });
  expect(asked.onTimeout).toBe("approve");

  await signIn(page, app.tenantA.email);
  await page.goto("/admin");
  const form = page.getByTestId("decision-policy-form");
  try {
    await form.getByLabel(/People only/).check();
    await form.getByRole("button", { name: "Save who decides" }).click();
    await expect(form.getByTestId("action-message")).toContainText("only people decide");
    const note = page.getByTestId("team-trail-row").first().getByTestId("team-trail-note");
    await expect(note).toContainText("with a deadline revisited");
    await expect(note).toContainText("approve → hand to the admins on 1 pending review");
    const waiting = await agent.ok("get_next_step", { planId });
    expect(waiting.review).toMatchObject({ onTimeout: "escalate" });
  } finally {
    await page.goto("/admin");
    await form.getByLabel(/People, and agents/).check();
    await form.getByRole("button", { name: "Save who decides" }).click();
    await expect(form.getByTestId("action-message")).toContainText("agents may relay");
    await agent.ok("cancel_plan", { planId, reason: "The test is over." });
  }
});
