import { request as httpRequest } from "node:http";
import { expect } from "@playwright/test";
import { type RunningApp, startFreshAppServer } from "../tests/support/app-server";
import { connectAgent, report } from "../tests/support/mcp-client";
import { keepScreenshot, watchedTest } from "./fixtures";

const test = watchedTest.extend<{ fresh: RunningApp }>({
  fresh: async ({ page }, use) => {
    const app = await startFreshAppServer("pglite");
    await use(app);
    // The page leaves first: a plan page still refreshing itself would log the
    // stopped server's refused connections as console errors.
    await page.goto("about:blank");
    await app.stop();
  },
});

/** The one-time code the server printed to its log when it started on the fresh install. */
async function setupCodeFromLog(app: RunningApp): Promise<string> {
  const pattern = /Cairn setup code: ([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})/;
  // The line is written before the server answers, but may reach the pipe a moment later.
  await expect.poll(() => pattern.test(app.serverOutput()), { timeout: 10_000 }).toBe(true);
  return pattern.exec(app.serverOutput())?.[1] ?? "";
}

/** GET a page with another Host header, as a page on a rebinding domain would reach the server. */
function getWithHost(url: string, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: { Host: host } }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () => resolve(body));
    });
    request.on("error", reject);
    request.end();
  });
}

test("on the embedded default: first admin in the browser, a key, a plan run from MCP and steered to completion", async ({
  page,
  fresh,
}) => {
  const code = await setupCodeFromLog(fresh);
  expect(fresh.serverOutput()).toContain("only while the server is stopped");
  // A page reached under a foreign name (DNS rebinding) gets no set-up form.
  expect(await getWithHost(`${fresh.url}/setup`, "rebind.example:3000")).toContain(
    "Set-up is not available at the address rebind.example:3000",
  );

  await page.goto(`${fresh.url}/sign-in`);
  await expect(page).toHaveURL(/\/setup$/);
  // Whoever reaches the page first cannot claim the install without the code.
  await page.getByLabel("Setup code").fill("AAAA-BBBB-CCCC-DDDD");
  await page.getByLabel("Team name").fill("Intruders");
  await page.getByLabel("E-mail").fill("mallory@example.com");
  await page.getByLabel(/Password/).fill("correct horse battery");
  await page.getByRole("button", { name: "Create the admin account" }).click();
  const refusal = page.getByTestId("action-message");
  await expect(refusal).toContainText("That setup code is not right");
  // Plain text, and it says the embedded database's server must be stopped for the CLI.
  await expect(refusal).not.toContainText("`");
  await expect(refusal).toContainText("only while the server is stopped");
  await expect(page).toHaveURL(/\/setup$/);
  // Only the code is cleared: what the person typed otherwise is still there.
  await expect(page.getByLabel("Setup code")).toHaveValue("");
  await expect(page.getByLabel("Team name")).toHaveValue("Intruders");
  await expect(page.getByLabel("E-mail")).toHaveValue("mallory@example.com");
  await expect(page.getByLabel(/Password/)).toHaveValue("correct horse battery");

  await page.getByLabel("Setup code").fill(code.toLowerCase());
  await page.getByLabel("Team name").fill("Lab");
  await page.getByLabel("Your name").fill("Ada");
  await page.getByLabel("E-mail").fill("ada@example.com");
  await page.getByLabel(/Password/).fill("correct horse battery");
  await page.getByRole("button", { name: "Create the admin account" }).click();
  await expect(page).toHaveURL(/\/admin\/users\?welcome=1$/);
  await expect(page.getByTestId("welcome")).toContainText("Cairn is set up");
  expect(fresh.serverOutput()).not.toContain("correct horse battery");
  await expect(page.getByTestId("signed-in-as")).toContainText("ada@example.com · admin");

  // The first-run page closes once an admin exists.
  await page.goto(`${fresh.url}/setup`);
  await expect(page).toHaveURL(/\/sign-in$|\/plans$/);

  await page.goto(`${fresh.url}/admin/users`);
  await page.getByLabel("Label").fill("Claude Code");
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("new-key-value").innerText()).trim();

  const agent = await connectAgent(fresh.mcpUrl, key);
  try {
    const created = await agent.ok("create_research_plan", {
      name: "[Scan] Solar in Norway",
      researchQuestion: "Does rooftop solar pay off in Oslo?",
      steps: [
        { stepType: "search", instructions: "Find production data." },
        { stepType: "checkpoint", instructions: "Ask whether to include subsidies." },
        { stepType: "synthesize", instructions: "Answer." },
      ],
    });
    const planId = created.planId;
    const step1 = await agent.ok("get_next_step", { planId });
    await agent.ok("submit_step_result", {
      planId,
      stepId: step1.step.stepId,
      result: { kWhPerYear: 850 },
      resultSummary: "About 850 kWh per kWp per year.",
      confidence: 0.7,
      stepExecutionReport: report,
    });
    const step2 = await agent.ok("get_next_step", { planId });
    await agent.ok("request_user_review", {
      planId,
      stepId: step2.step.stepId,
      summary: "Include subsidies?",
    });

    await page.goto(`${fresh.url}/plans`);
    await expect(page.getByTestId("inbox")).toContainText("1");
    await keepScreenshot(page, "plans-list");
    await page.getByRole("link", { name: "[Scan] Solar in Norway" }).click();
    await page.getByTestId("review-panel").getByRole("button", { name: "Approve" }).click();
    await expect(page.getByTestId("action-message")).toHaveText(/Approved/);

    const step3 = await agent.ok("get_next_step", { planId });
    await agent.ok("submit_step_result", {
      planId,
      stepId: step3.step.stepId,
      result: { answer: "Yes, in about 12 years." },
      stepExecutionReport: report,
    });
    expect((await agent.ok("get_next_step", { planId })).status).toBe("plan_complete");
    // The MCP handler's start-up says nothing an operator cannot act on.
    expect(fresh.serverOutput()).not.toContain("responseMode");
    await page.reload();
    await expect(page.locator(".plan-header").getByTestId("status")).toHaveText("Completed");
    await keepScreenshot(page, "plan-page-1280");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await expect(page.getByRole("heading", { name: "[Scan] Solar in Norway" })).toBeVisible();
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - window.innerWidth,
    );
    expect(overflow).toBeLessThanOrEqual(1);
    await keepScreenshot(page, "plan-page-390");
    await page.goto(`${fresh.url}/plans`);
    await keepScreenshot(page, "plans-list-390");
  } finally {
    await agent.close();
  }
});
