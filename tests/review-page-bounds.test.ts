/**
 * A review's pages stay within 1 MB however an agent writes its reviews
 * (security review of issue 40). A proposal at its size limit made of
 * thousands of tiny fields (`{"a":0,"b":0,…}`) was shown whole, each field
 * with its own markup: one review put 3 MB into the plan page and
 * read_review_card near 1 MB, and the inbox, twenty reviews a page, 61 MB.
 * Twenty reviews with their summaries, questions and instructions at their
 * limits in quote marks (each written as `&quot;` in the HTML and escaped
 * again in React's payload) put 4 MB into an inbox page. Over the production
 * build's web door and /api/mcp, on both databases.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_RESULT_BYTES } from "@/lib/services/shared/fields";
import { PREVIEW_CHARS } from "@/lib/services/views/full-values";
import { INBOX_PAGE_SIZE } from "@/lib/services/views/review-inbox";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { connectAgent, type LoopAgent } from "./support/mcp-client";
import { pageBytes, signInOverHttp, type WebSession } from "./support/web-session";

const MB = 1024 * 1024;

/** A quote mark is written longest: `&quot;` in the HTML, escaped again in React's payload. */
const quotes = (n: number) => '"'.repeat(n);

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

describe.each(BACKENDS)("reviews at their limits on %s", (backend) => {
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
      expect(html, path).toContain('data-testid="review-proposal-omitted"');
    }
    const { html } = await pageBytes(admin, `/plans/${planIds[0]}`);
    const link = /<a [^>]*data-testid="review-proposal-all"[^>]*>/.exec(html)?.[0];
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
      review: { proposal: { key: string }[]; proposalFieldsOmitted: number };
    };
    expect(review.proposal.length).toBeGreaterThan(0);
    expect(review.proposal.length + review.proposalFieldsOmitted).toBe(
      Object.keys(proposal).length,
    );
    expect(review.proposal.map((field) => field.key)).toEqual(
      Object.keys(proposal).slice(0, review.proposal.length),
    );
  }, 60_000);

  it("shows every review of an inbox of the longest reviews in quote marks, each page under 1 MB", async () => {
    const quoter = await connectAgent(app.mcpUrl, app.tenantB.key);
    const asked: string[] = [];
    try {
      for (let i = 0; i < INBOX_PAGE_SIZE; i++) {
        const created = await quoter.ok("create_research_plan", {
          name: `Quotes ${i}`,
          researchQuestion: "q",
          // An instruction's limit.
          steps: [{ stepType: "analyze", instructions: quotes(20_000) }],
        });
        const next = await quoter.ok("get_next_step", { planId: created.planId });
        const review = await quoter.ok("request_user_review", {
          planId: created.planId,
          stepId: next.step.stepId,
          // request_user_review's limits: a summary of 20,000 characters, 10 questions of 2,000.
          summary: quotes(20_000),
          questions: Array.from({ length: 10 }, (_, k) => `${k}${quotes(1_999)}`),
          proposedResult: { a: quotes(PREVIEW_CHARS * 2) },
        });
        asked.push(review.reviewRequestId);
      }
    } finally {
      await quoter.close();
    }
    const person = await signInOverHttp(app.url, app.tenantB.email);
    const shown: string[] = [];
    let path = "/inbox";
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(INBOX_PAGE_SIZE);
      const { html, htmlBytes, payloadBytes } = await pageBytes(person, path);
      expect(htmlBytes, path).toBeLessThan(MB);
      expect(payloadBytes, path).toBeLessThan(MB);
      for (const match of html.matchAll(/name="reviewRequestId" value="([^"]+)"/g)) {
        if (match[1] && !shown.includes(match[1])) shown.push(match[1]);
      }
      const link = /<a [^>]*data-testid="inbox-next"[^>]*>/.exec(html)?.[0];
      const next = link && /href="([^"]*)"/.exec(link)?.[1];
      if (!next) break;
      path = next.replaceAll("&amp;", "&");
    }
    expect(shown).toEqual(asked);
  }, 300_000);
});
