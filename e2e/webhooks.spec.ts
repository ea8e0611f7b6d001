import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, keepScreenshot, report, signIn, test } from "./fixtures";

test("an admin registers a webhook, sees its delivery and resends it", async ({
  page,
  agent,
  app,
}) => {
  const received: { delivery: string; event: string }[] = [];
  const receiver = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      received.push({
        delivery: String(request.headers["cairn-delivery"]),
        event: String(request.headers["cairn-event"]),
      });
      response.statusCode = 204;
      response.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cairn`;

  try {
    await signIn(page, app.tenantA.email);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await expect(page.getByRole("heading", { name: "Webhooks and e-mail" })).toBeVisible();
    await expect(page.getByTestId("email-status")).toContainText("E-mail is off");

    // Private networks are the operator's to allow: here 127.0.0.1 only, no switch for the team.
    await expect(page.getByTestId("private-webhooks-status")).toContainText("operator");
    await expect(page.getByRole("button", { name: "Allow private addresses" })).toHaveCount(0);
    await page.getByLabel("URL").fill("https://10.1.2.3/cairn");
    await page.getByRole("button", { name: "Register endpoint" }).click();
    await expect(page.getByTestId("action-message")).toContainText("Refused");
    await expect(page.getByTestId("action-message")).not.toContainText("10.1.2.3");
    await page.getByLabel("URL").fill(url);
    await page.getByLabel("Description").fill("e2e receiver");
    await page.getByRole("button", { name: "Register endpoint" }).click();
    await expect(page.getByTestId("new-webhook-secret-value")).toHaveText(/^whsec_/);
    await expect(page.getByTestId("webhook-endpoints")).toContainText(url);

    const plan = await agent.ok("create_research_plan", {
      name: "Webhook plan",
      researchQuestion: "Does the webhook fire?",
      steps: [{ stepType: "search", instructions: "Look." }],
    });
    const next = await agent.ok("get_next_step", { planId: plan.planId });
    await agent.ok("submit_step_result", {
      planId: plan.planId,
      stepId: next.step.stepId,
      result: { ok: true },
      stepExecutionReport: report,
    });
    await expect.poll(() => received.length).toBe(1);
    expect(received[0]?.event).toBe("plan.completed");

    await page.reload();
    const row = page.getByTestId("webhook-delivery").filter({ hasText: "plan.completed" });
    await expect(row.getByTestId("webhook-delivery-status")).toContainText("delivered");
    await expect(row).toContainText("HTTP 204");
    await keepScreenshot(page, "admin-webhooks");

    await row.getByRole("button", { name: "Resend" }).click();
    await expect(page.getByTestId("webhook-deliveries")).toContainText("Queued to be sent again");
    await expect.poll(() => received.length).toBe(2);
    expect(received[1]?.delivery).toBe(received[0]?.delivery);
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
});

test("a person turns review e-mails off and on again on the account page", async ({
  page,
  app,
}) => {
  await signIn(page, app.tenantA.researcherEmail);
  await page.getByRole("link", { name: "Account" }).click();
  const status = page.getByTestId("email-notifications");
  await expect(status).toContainText("You get an e-mail when a review is requested");
  await expect(status).toContainText("E-mail is off on this server");
  await page.getByRole("button", { name: "Turn review e-mails off" }).click();
  await expect(status).toContainText("You get no review e-mails.");
  await page.reload();
  await expect(status).toContainText("You get no review e-mails.");
  await page.getByRole("button", { name: "Turn review e-mails on" }).click();
  await expect(status).toContainText("You get an e-mail when a review is requested");
});
