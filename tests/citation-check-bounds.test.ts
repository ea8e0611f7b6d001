/**
 * A deliverable's citation check stays within its readers' bounds (security
 * review of issue 40): every reader shows the check whole, and 240 links of
 * 2,000 characters whose canonical form percent-encoding triples made it
 * 6.6 MB in store_research_output's answer and get_research_context, and the
 * plan page 10 MB. Over the production build's /api/mcp and web door, on both
 * databases.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { connectAgent, type LoopAgent, report } from "./support/mcp-client";
import { signInOverHttp } from "./support/web-session";

const MB = 1024 * 1024;

/** An answer's bytes: its text block and its structured content. */
const answerBytes = (answer: { text: string; data: unknown }) =>
  Buffer.byteLength(answer.text, "utf8") + Buffer.byteLength(JSON.stringify(answer.data), "utf8");

describe.each(BACKENDS)("the citation check of the longest links on %s", (backend) => {
  let app: AppServer;
  let agent: LoopAgent;

  beforeAll(async () => {
    app = await startAppServer(backend);
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
  }, 120_000);
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  it("answers store_research_output and get_research_context, and shows the plan page, in under 1 MB", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "Cited",
      researchQuestion: "q",
      steps: [{ stepType: "analyze", instructions: "x" }],
    });
    const planId = created.planId;
    const next = await agent.ok("get_next_step", { planId });
    await agent.ok("submit_step_result", {
      planId,
      stepId: next.step.stepId,
      result: {},
      stepExecutionReport: report,
    });
    // 240 such links are about the request body's limit (1 MB) and the deliverable's (500,000 characters).
    const links = Array.from(
      { length: 240 },
      (_, i) => `http://a${i}.example/${"é".repeat(1_960)}`,
    );
    const stored = await agent.call("store_research_output", {
      planId,
      outputMediaType: "markdown_report",
      content: links.join(" "),
    });
    expect(stored.isError).toBe(false);
    expect(answerBytes(stored)).toBeLessThan(MB);
    const { citationCheck } = stored.data as {
      citationCheck: { citations: unknown[]; truncated: boolean };
    };
    expect(citationCheck.citations.length).toBeGreaterThan(0);
    expect(citationCheck.truncated).toBe(true);

    const context = await agent.call("get_research_context", { planId });
    expect(context.isError).toBe(false);
    expect(answerBytes(context)).toBeLessThan(MB);

    const admin = await signInOverHttp(app.url, app.tenantA.email);
    const page = await admin.get(`/plans/${planId}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(Buffer.byteLength(html, "utf8")).toBeLessThan(MB);
    expect(html).toContain("Only the first citations and uncited key claims are listed.");
  }, 300_000);
});
