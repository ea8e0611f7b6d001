/**
 * A proposed result shown field by field stays within a page (security review
 * of issue 40): a proposal at its size limit made of thousands of tiny fields
 * (`{"a":0,"b":0,…}`) was shown whole, each field with its own markup, so one
 * review put megabytes into the plan page and read_review_card, and the
 * inbox, twenty reviews a page, many times that. Over the production build's
 * web door and /api/mcp, on both databases.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_RESULT_BYTES } from "@/lib/services/shared/fields";
import { INBOX_PAGE_SIZE } from "@/lib/services/views/review-inbox";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { connectAgent, type LoopAgent } from "./support/mcp-client";
import { signInOverHttp, type WebSession } from "./support/web-session";

const MB = 1024 * 1024;

/** About the most fields a proposal within MAX_RESULT_BYTES holds: the shortest keys, each with 0. */
function tinyFields(): Record<string, number> {
  const proposal: Record<string, number> = {};
  let bytes = 2;
  for (let i = 0; ; i++) {
    const key = i.toString(36);
    const entry = `"${key}":0,`.length;
    if (bytes + entry > MAX_RESULT_BYTES - 64) return proposal;
    proposal[key] = 0;
    bytes += entry;
  }
}

/** A page's HTML and the RSC payload a client-side navigation to it fetches, in bytes. */
async function pageBytes(session: WebSession, path: string) {
  const page = await session.get(path);
  expect(page.status, path).toBe(200);
  const html = await page.text();
  const asked = await session.get(path, { RSC: "1" });
  const payload =
    asked.status === 307
      ? await session.get(asked.headers.get("location") ?? "", { RSC: "1" })
      : asked;
  expect(payload.status, path).toBe(200);
  return {
    html,
    htmlBytes: Buffer.byteLength(html, "utf8"),
    payloadBytes: Buffer.byteLength(await payload.text(), "utf8"),
  };
}

describe.each(BACKENDS)("a proposal of many tiny fields on %s", (backend) => {
  let app: AppServer;
  let agent: LoopAgent;
  let admin: WebSession;
  const proposal = tinyFields();
  const planIds: string[] = [];

  beforeAll(async () => {
    app = await startAppServer(backend);
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    // A page of the inbox: each plan with its review waiting, each proposing the same.
    for (let i = 0; i < INBOX_PAGE_SIZE; i++) {
      const created = await agent.ok("create_research_plan", {
        name: `Tiny fields ${i}`,
        researchQuestion: "How many fields can a page show?",
        steps: [{ stepType: "analyze", instructions: "Propose." }],
      });
      const next = await agent.ok("get_next_step", { planId: created.planId });
      await agent.ok("request_user_review", {
        planId: created.planId,
        stepId: next.step.stepId,
        summary: "Many fields.",
        proposedResult: proposal,
      });
      planIds.push(created.planId);
    }
    admin = await signInOverHttp(app.url, app.tenantA.email);
  }, 300_000);
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  it("shows the plan page and the inbox in under 1 MB each, the fields beyond them counted and the whole proposal behind a link", async () => {
    for (const path of [`/plans/${planIds[0]}`, "/inbox"]) {
      const { html, htmlBytes, payloadBytes } = await pageBytes(admin, path);
      expect(htmlBytes, path).toBeLessThan(MB);
      expect(payloadBytes, path).toBeLessThan(MB);
      expect(html, path).toContain('data-testid="review-proposal-more"');
    }
    const { html } = await pageBytes(admin, `/plans/${planIds[0]}`);
    const link = /<a [^>]*data-testid="review-proposal-whole"[^>]*>/.exec(html)?.[0];
    const href = link && /href="([^"]*)"/.exec(link)?.[1];
    expect(href).toEqual(expect.any(String));
    const whole = await admin.get((href as string).replaceAll("&amp;", "&"));
    expect(whole.status).toBe(200);
    // As stored: every key, in the agent's order.
    const text = await whole.text();
    expect(JSON.parse(text)).toEqual(proposal);
    expect(Object.keys(JSON.parse(text))).toEqual(Object.keys(proposal));
  }, 120_000);

  it("answers read_review_card in under 1 MB, saying how many fields it leaves out", async () => {
    const answer = await agent.call("read_review_card", { planId: planIds[0] });
    expect(answer.isError).toBe(false);
    const bytes =
      Buffer.byteLength(answer.text, "utf8") +
      Buffer.byteLength(JSON.stringify(answer.data), "utf8");
    expect(bytes).toBeLessThan(MB);
    const { review } = answer.data as {
      review: { proposal: { key: string }[]; proposalNotShown: number };
    };
    expect(review.proposal.length).toBeGreaterThan(0);
    expect(review.proposal.length + review.proposalNotShown).toBe(Object.keys(proposal).length);
    expect(review.proposal.map((field) => field.key)).toEqual(
      Object.keys(proposal).slice(0, review.proposal.length),
    );
  }, 60_000);
});
