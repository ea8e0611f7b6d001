import { connectAgent } from "../tests/support/mcp-client";
import { expect, expectHydrated, NOT_FOUND, planAwaitingReview, signIn, test } from "./fixtures";

test("a researcher of another tenant gets 404 for the plan and its server actions", async ({
  page,
  agent,
  app,
  allowConsoleError,
}) => {
  allowConsoleError(NOT_FOUND);
  const alphaPlan = await planAwaitingReview(agent, "Alpha secret");
  const beta = await connectAgent(app.mcpUrl, app.tenantB.key);
  try {
    const betaPlan = await planAwaitingReview(beta, "Beta own");
    await signIn(page, app.tenantB.researcherEmail);

    const response = await page.goto(`/plans/${alphaPlan.planId}`);
    expect(response?.status()).toBe(404);
    await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
    await page.goto("/plans");
    await expect(page.getByRole("link", { name: "Alpha secret" })).toHaveCount(0);

    // Replay the review action from Beta's own page with Alpha's ids.
    await page.goto(`/plans/${betaPlan.planId}`);
    // Pressed before hydration, the button would post the server's HTML form,
    // not React's action with the ids set below.
    await expectHydrated(page);
    // The decision form (the panel also holds the assignment form).
    const panel = page
      .getByTestId("review-panel")
      .locator("form")
      .filter({ has: page.getByRole("button", { name: "Approve" }) });
    // Set Alpha's ids and press Approve in one task, so the page's own refresh
    // cannot render Beta's ids back in between.
    await panel.evaluate(
      (form, ids) => {
        const set = (name: string, value: string) => {
          const input = form.querySelector(`input[name="${name}"]`) as HTMLInputElement;
          input.value = value;
        };
        set("planId", ids.planId);
        set("reviewRequestId", ids.reviewRequestId);
        const approve = [...form.querySelectorAll("button")].find(
          (button) => button.textContent === "Approve",
        );
        approve?.click();
      },
      { planId: alphaPlan.planId, reviewRequestId: alphaPlan.reviewRequestId },
    );
    await expect(page.getByTestId("action-message")).toHaveText(
      "Not found: it does not exist in your account.",
    );
    expect((await agent.ok("get_plan_status", { planId: alphaPlan.planId })).status).toBe(
      "awaiting_review",
    );
    expect((await beta.ok("get_plan_status", { planId: betaPlan.planId })).status).toBe(
      "awaiting_review",
    );
  } finally {
    await beta.close();
  }
});
