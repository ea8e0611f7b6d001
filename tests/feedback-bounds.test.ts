/**
 * A plan's feedback stays within its readers' bounds (security review of issue
 * 40): submit_research_feedback took any number per plan and every reader
 * showed all of it, so 300 at their longest in quote marks made
 * get_research_context 6 MB and the plan page 24 MB (10 s of rendering,
 * another team's ping 3.8 s). A plan now takes MAX_PLAN_FEEDBACK, and the page
 * shortens each. Over the production build's /api/mcp and web door, on both
 * databases.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_PLAN_FEEDBACK } from "@/lib/services/research/submit-research-feedback";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { connectAgent, type LoopAgent } from "./support/mcp-client";
import { signInOverHttp } from "./support/web-session";

const MB = 1024 * 1024;
/** A quote mark is written longest: `&quot;` in the HTML, escaped again in React's payload. */
const quotes = (n: number) => '"'.repeat(n);

describe.each(BACKENDS)("a plan's feedback at its limits on %s", (backend) => {
  let app: AppServer;
  let agent: LoopAgent;
  let planId: string;

  beforeAll(async () => {
    app = await startAppServer(backend);
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    const created = await agent.ok("create_research_plan", {
      name: "Judged",
      researchQuestion: "q",
      steps: [{ stepType: "analyze", instructions: "x" }],
    });
    planId = created.planId;
  }, 120_000);
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  it("takes MAX_PLAN_FEEDBACK at their longest, refuses one more, and reads them in under 1 MB", async () => {
    // submit_research_feedback's limits: a summary and suggestions of 5,000 characters.
    const feedback = {
      planId,
      feedbackType: "closing",
      satisfaction: 3,
      summary: quotes(5_000),
      improvementSuggestions: quotes(5_000),
      followUpRequested: false,
    };
    for (let i = 0; i < MAX_PLAN_FEEDBACK; i++)
      await agent.ok("submit_research_feedback", feedback);
    expect(await agent.fails("submit_research_feedback", feedback)).toMatch(
      /^VALIDATION_ERROR: planId: the plan holds \d+ feedback already/,
    );

    const context = await agent.call("get_research_context", { planId });
    expect(context.isError).toBe(false);
    expect(
      Buffer.byteLength(context.text, "utf8") +
        Buffer.byteLength(JSON.stringify(context.data), "utf8"),
    ).toBeLessThan(MB);
    expect((context.data as { feedback: unknown[] }).feedback).toHaveLength(MAX_PLAN_FEEDBACK);

    const admin = await signInOverHttp(app.url, app.tenantA.email);
    const page = await admin.get(`/plans/${planId}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(Buffer.byteLength(html, "utf8")).toBeLessThan(MB);
    expect(html.split('data-testid="feedback"')).toHaveLength(2);
  }, 300_000);
});
