/**
 * No answer and no page grows with what a plan holds (issue 40; docs/evidence.md,
 * "Who reads it"; docs/execution-loop.md, "Reading a plan back"): a plan filled
 * to its evidence limits, with every text at its longest and in the shape JSON
 * writes longest, is read through get_research_context, get_step_context,
 * read_review_card and the plan page, each under 1 MB, and read_evidence walks
 * every source and claim a page at a time and gives one whole. A plan of the
 * most steps, some with the longest result, report and notes, and the longest
 * deliverable, is read through the contexts, each list a page at a time, and
 * read_evidence gives each long value whole, equal to what was stored; its page
 * shows the deliverable's beginning and its steps a page at a time. Over
 * /api/mcp and the web door, on both databases and with both eras' clients.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CONDITION_EXPRESSION_LENGTH } from "@/lib/plan-engine/conditions";
import { MAX_PLAN_STEPS } from "@/lib/plan-engine/modify";
import {
  MAX_CITATIONS_PER_CLAIM,
  MAX_EXTRACT_CHARS,
  MAX_PLAN_CLAIMS,
  MAX_PLAN_SOURCES,
} from "@/lib/services/evidence/record-evidence";
import { CONTENT_TEXT_MAX } from "@/lib/services/research/store-research";
import { OUTPUT_CONTENT_MAX } from "@/lib/services/research/store-research-output";
import { PREVIEW_CHARS } from "@/lib/services/shared/bounded";
import { MAX_REPORT_LIST_BYTES, MAX_RESULT_BYTES } from "@/lib/services/shared/fields";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import {
  CLIENT_REVISIONS,
  connectAgent,
  connectAgentOn,
  type LoopAgent,
  report,
} from "./support/mcp-client";
import { pageBytes, signInOverHttp, type WebSession } from "./support/web-session";

const MB = 1024 * 1024;

/** A quote mark JSON writes as two bytes: text of it is as long as its answer gets. */
const quotes = (n: number) => '"'.repeat(n);
/** The sources claims cite: short links, so a claim's citations fit the request body. */
const citedUrl = (k: number) => `https://cited-${k}.example/${"c".repeat(100)}`;
const longUrl = (i: number) => `https://long-${i}.example/${"p".repeat(1_900)}`;

/**
 * A page's size as sent, failing the test at 1 MB: its HTML, and the payload a
 * client-side navigation to it fetches instead (Next sends a request without
 * its cache-busting `_rsc` parameter to the address with it). The HTML.
 */
async function boundedPage(session: WebSession, path: string): Promise<string> {
  const { html, htmlBytes, payloadBytes } = await pageBytes(session, path);
  expect(htmlBytes, path).toBeLessThan(MB);
  expect(payloadBytes, path).toBeLessThan(MB);
  return html;
}

/** The longest result and report submit_step_result takes, of quotes: as long as JSON writes them. */
const longestResult = { text: quotes((MAX_RESULT_BYTES - 20) / 2) };
const longestReport = {
  thinking: quotes(200_000),
  ...Object.fromEntries(
    ["webSearches", "webFetches", "otherToolCalls", "subagents"].map((list) => [
      list,
      [quotes((MAX_REPORT_LIST_BYTES - 10) / 2)],
    ]),
  ),
};
/** The longest deliverable, in lines of prose (quotes would pass the request's 1 MB). */
const longestDeliverable =
  `# Findings\n${"The finding holds, as the sources say.\n".repeat(OUTPUT_CONTENT_MAX / 39)}`
    .slice(0, OUTPUT_CONTENT_MAX)
    .trimEnd();

describe.each(BACKENDS)("every reader bounded on %s", (backend) => {
  let app: AppServer;
  let filler: Awaited<ReturnType<typeof connectAgent>>;
  let planId: string;
  let firstStepId: string;
  let secondStepId: string;

  beforeAll(async () => {
    app = await startAppServer(backend);
    filler = await connectAgent(app.mcpUrl, app.tenantA.key);
    const created = await filler.ok("create_research_plan", {
      name: "Full of evidence",
      researchQuestion: "How much can one plan hold?",
      steps: ["search", "analyze"].map((stepType) => ({ stepType, instructions: "Do it." })),
    });
    planId = created.planId;
    const first = await filler.ok("get_next_step", { planId });
    firstStepId = first.step.stepId;
    await filler.ok("submit_step_result", {
      planId,
      stepId: firstStepId,
      result: {},
      stepExecutionReport: report,
      evidence: {
        sources: Array.from({ length: MAX_CITATIONS_PER_CLAIM * 2 }, (_, k) => ({
          url: citedUrl(k),
          title: quotes(500),
          extract: quotes(MAX_EXTRACT_CHARS),
        })),
      },
    });
    // 50 a call: the request body's limit (1 MB) holds no more at their longest.
    const rest = MAX_PLAN_SOURCES - MAX_CITATIONS_PER_CLAIM * 2;
    for (let call = 0; call * 50 < rest; call++) {
      const sources = Array.from({ length: Math.min(50, rest - call * 50) }, (_, i) => ({
        url: longUrl(call * 50 + i),
        title: quotes(500),
        extract: quotes(MAX_EXTRACT_CHARS),
      }));
      await filler.ok("add_step_evidence", { planId, stepId: firstStepId, evidence: { sources } });
    }
    // Claims until the plan holds no more: its count or its total of text.
    let refusal = "";
    for (let call = 0; !refusal; call++) {
      const answer = await filler.call("add_step_evidence", {
        planId,
        stepId: firstStepId,
        evidence: {
          claims: Array.from({ length: 20 }, (_, i) => ({
            text: `${call}.${i} ${quotes(1_990)}`,
            key: true,
            supports: Array.from({ length: MAX_CITATIONS_PER_CLAIM }, (_, k) => ({
              source: citedUrl(k),
              quote: quotes(300),
              locator: quotes(100),
            })),
            contradicts: Array.from({ length: MAX_CITATIONS_PER_CLAIM }, (_, k) => ({
              source: citedUrl(MAX_CITATIONS_PER_CLAIM + k),
              quote: quotes(300),
            })),
          })),
        },
      });
      if (answer.isError) refusal = answer.text;
    }
    expect(refusal).toMatch(/^VALIDATION_ERROR: evidence.*(claims|bytes of text), over the limit/);
    const second = await filler.ok("get_next_step", { planId });
    secondStepId = second.step.stepId;
    await filler.ok("request_user_review", { planId, stepId: secondStepId, summary: "Check." });
  }, 600_000);
  afterAll(async () => {
    await filler?.close();
    await app?.stop();
  });

  describe.each(CLIENT_REVISIONS)("a %s client", (revision) => {
    let agent: LoopAgent;
    beforeAll(async () => {
      agent = await connectAgentOn(revision, app.mcpUrl, app.tenantA.key);
    });
    afterAll(async () => {
      await agent?.close();
    });

    /** The answer's size as sent: its text block and its structured content. */
    async function answerBytes(name: string, args: Record<string, unknown>) {
      const answer = await agent.call(name, args);
      if (answer.isError) throw new Error(`${name} failed: ${answer.text}`);
      const bytes =
        Buffer.byteLength(answer.text, "utf8") +
        Buffer.byteLength(JSON.stringify(answer.data), "utf8");
      return { bytes, data: answer.data };
    }

    it("answers each context and the review card in under 1 MB, with the evidence's first page and totals", async () => {
      // The review card is read by hosts that render Cairn's cards (the 1.x
      // client here; a 2026-07-28 client must declare the MCP Apps extension).
      const reads: [string, Record<string, unknown>][] = [
        ["get_research_context", { planId }],
        ["get_step_context", { planId, stepId: secondStepId }],
      ];
      if (revision === "2025-11-25") reads.push(["read_review_card", { planId }]);
      for (const [name, args] of reads) {
        const { bytes, data } = await answerBytes(name, args);
        expect(bytes, name).toBeLessThan(MB);
        expect(data.evidence.sourcesTotal).toBe(MAX_PLAN_SOURCES);
        expect(data.evidence.claimsTotal).toBeGreaterThan(0);
        expect(data.evidence.claimsTotal).toBeLessThanOrEqual(MAX_PLAN_CLAIMS);
        expect(data.evidence.sourcesNextCursor).toEqual(expect.any(String));
        expect(data.evidence.claimsNextCursor).toEqual(expect.any(String));
        // Extracts and quotes shortened, no title copied into a citation.
        expect(data.evidence.sources[0].extractShortened).toBe(true);
        expect(data.evidence.claims[0].supports[0]).not.toHaveProperty("title");
        expect(data.evidence.claims[0].supports[0].quoteShortened).toBe(false);
      }
    }, 120_000);

    it("read_evidence walks every source and claim once, each page under 1 MB, and gives one whole", async () => {
      const seen = { sources: new Set<string>(), claims: new Set<string>() };
      let totals = { sources: 0, claims: 0 };
      const at: { sourcesCursor?: string; claimsCursor?: string } = {};
      const done = { sources: false, claims: false };
      for (let pages = 0; !done.sources || !done.claims; pages++) {
        expect(pages).toBeLessThan(200);
        const { bytes, data } = await answerBytes("read_evidence", { planId, ...at });
        expect(bytes).toBeLessThan(MB);
        const evidence = data.evidence;
        totals = { sources: evidence.sourcesTotal, claims: evidence.claimsTotal };
        // A list read to its end is read from its start again beside the other: not counted.
        if (!done.sources) {
          for (const source of evidence.sources) seen.sources.add(source.sourceKey);
          done.sources = evidence.sourcesNextCursor === null;
          at.sourcesCursor = evidence.sourcesNextCursor ?? undefined;
        }
        if (!done.claims) {
          for (const claim of evidence.claims) seen.claims.add(claim.claimId);
          done.claims = evidence.claimsNextCursor === null;
          at.claimsCursor = evidence.claimsNextCursor ?? undefined;
        }
      }
      expect(seen.sources.size).toBe(totals.sources);
      expect(seen.claims.size).toBe(totals.claims);

      const whole = await agent.ok("read_evidence", { planId, sourceKey: citedUrl(0) });
      expect(whole.source.extract).toBe(quotes(MAX_EXTRACT_CHARS));
      expect(whole.source.extractShortened).toBe(false);
      const [claimId] = seen.claims;
      const claim = await agent.ok("read_evidence", { planId, claimId });
      expect(claim.claim.supports[0].quote).toBe(quotes(300));
      expect(
        await agent.fails("read_evidence", { planId, sourceKey: "https://never.example/" }),
      ).toMatch(/^NOT_FOUND: sourceKey/);
    }, 300_000);
  });

  describe("a plan of the most steps, long results and the longest deliverable", () => {
    let agent: LoopAgent;
    let fullPlanId: string;
    const longSteps: string[] = [];
    let outputId: string;

    beforeAll(async () => {
      agent = await connectAgent(app.mcpUrl, app.tenantA.key);
      const step = (i: number) => ({ stepType: "analyze", instructions: `${i} ${quotes(2_500)}` });
      const half = MAX_PLAN_STEPS / 2;
      const created = await agent.ok("create_research_plan", {
        name: "Full of results",
        researchQuestion: "How long can results get?",
        steps: Array.from({ length: half }, (_, i) => step(i)),
      });
      fullPlanId = created.planId;
      await agent.ok("modify_plan", {
        planId: fullPlanId,
        action: "add_steps",
        modificationRationale: "More.",
        steps: Array.from({ length: MAX_PLAN_STEPS - half }, (_, i) => step(half + i)),
      });
      // Three steps with everything at its longest, then forty with values just over the cut.
      for (let i = 0; i < 43; i++) {
        const next = await agent.ok("get_next_step", { planId: fullPlanId });
        const longest = i < 3;
        if (longest) longSteps.push(next.step.stepId);
        await agent.ok("submit_step_result", {
          planId: fullPlanId,
          stepId: next.step.stepId,
          result: longest ? longestResult : { text: quotes(PREVIEW_CHARS + 500) },
          resultSummary: quotes(longest ? 10_000 : PREVIEW_CHARS + 500),
          outputFormattingNotes: quotes(longest ? 10_000 : PREVIEW_CHARS + 500),
          stepExecutionReport: longest
            ? longestReport
            : { ...report, thinking: quotes(PREVIEW_CHARS + 500) },
        });
      }
      const stored = await agent.ok("store_research_output", {
        planId: fullPlanId,
        outputMediaType: "markdown_report",
        content: longestDeliverable,
      });
      outputId = stored.outputId;
    }, 600_000);
    afterAll(async () => {
      await agent?.close();
    });

    /** A tool's answer, failing the test at 1 MB or more (its text block and structured content). */
    async function bounded(name: string, args: Record<string, unknown>) {
      const answer = await agent.call(name, args);
      if (answer.isError) throw new Error(`${name} failed: ${answer.text}`);
      const bytes =
        Buffer.byteLength(answer.text, "utf8") +
        Buffer.byteLength(JSON.stringify(answer.data), "utf8");
      expect(bytes, name).toBeLessThan(MB);
      return answer.data;
    }

    /** Every page of a list of steps, by the tool's stepsCursor: the step ids in order. */
    async function walkSteps(name: string, args: Record<string, unknown>, list: string) {
      const ids: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; ; pages++) {
        expect(pages).toBeLessThan(MAX_PLAN_STEPS);
        const data = await bounded(name, { ...args, stepsCursor: cursor });
        ids.push(...data[list].map((s: { stepId: string }) => s.stepId));
        if (data.stepsNextCursor === null) return ids;
        cursor = data.stepsNextCursor;
      }
    }

    /** One value read whole through read_evidence, a page of text at a time. */
    async function wholeText(of: string, part: string) {
      let text = "";
      let offset: number | null = 0;
      for (let pages = 0; offset !== null; pages++) {
        expect(pages).toBeLessThan(20);
        const data = await bounded("read_evidence", { planId: fullPlanId, of, part, offset });
        expect(data.text.offset).toBe(offset);
        text += data.text.text;
        offset = data.text.nextOffset;
      }
      return text;
    }

    it("answers each context in under 1 MB, long values cut and named, every step a page at a time", async () => {
      const context = await bounded("get_research_context", { planId: fullPlanId });
      expect(context.progress.total).toBe(MAX_PLAN_STEPS);
      const first = context.steps[0];
      expect(first.shortened).toEqual(
        expect.arrayContaining(["instructions", "result", "stepExecutionReport", "resultSummary"]),
      );
      expect(first.instructions).toHaveLength(PREVIEW_CHARS);
      expect(first.result).toEqual({ preview: expect.any(String) });
      expect(context.deliverable.outputId).toBe(outputId);
      expect(context.deliverable.shortened).toEqual(["content"]);
      expect(context.deliverable.content).toBe(longestDeliverable.slice(0, PREVIEW_CHARS));
      const all = await walkSteps("get_research_context", { planId: fullPlanId }, "steps");
      expect(new Set(all).size).toBe(MAX_PLAN_STEPS);

      const [lastStepId] = all.slice(-1);
      const stepContext = await bounded("get_step_context", {
        planId: fullPlanId,
        stepId: lastStepId,
      });
      expect(stepContext.step.stepId).toBe(lastStepId);
      const prior = await walkSteps(
        "get_step_context",
        { planId: fullPlanId, stepId: lastStepId },
        "priorSteps",
      );
      expect(prior).toEqual(all.slice(0, -1));
    }, 300_000);

    it("gives each long value whole through read_evidence, equal to what was stored", async () => {
      const [stepId] = longSteps as [string];
      expect(JSON.parse(await wholeText(stepId, "result"))).toEqual(longestResult);
      expect(JSON.parse(await wholeText(stepId, "stepExecutionReport"))).toEqual(longestReport);
      expect(await wholeText(stepId, "resultSummary")).toBe(quotes(10_000));
      expect(await wholeText(outputId, "content")).toBe(longestDeliverable);
      expect(await agent.fails("read_evidence", { planId: fullPlanId, of: outputId })).toMatch(
        /^VALIDATION_ERROR: of, part/,
      );
    }, 300_000);

    it("shows the plan page in under 1 MB on every page of its steps, each step once, the deliverable's beginning", async () => {
      const admin = await signInOverHttp(app.url, app.tenantA.email);
      const shown: number[] = [];
      let path = `/plans/${fullPlanId}`;
      for (let pages = 0; ; pages++) {
        expect(pages).toBeLessThan(MAX_PLAN_STEPS);
        const html = await boundedPage(admin, path);
        if (pages === 0) {
          expect(html).toContain('data-testid="deliverable-shortened"');
          expect(html).toContain(`href="/plans/${fullPlanId}/deliverable"`);
          // The preview's lines, in the markup and in React's payload, never the whole's.
          const lines = html.split("The finding holds").length - 1;
          expect(lines).toBeGreaterThan(0);
          expect(lines).toBeLessThanOrEqual(2 * Math.ceil(PREVIEW_CHARS / 39));
        }
        shown.push(...[...html.matchAll(/data-testid="step-(\d+)"/g)].map((m) => Number(m[1])));
        const link = /<a [^>]*data-testid="steps-next"[^>]*>/.exec(html)?.[0];
        const next = link && /href="([^"]*)"/.exec(link)?.[1];
        if (!next) break;
        path = next.replaceAll("&amp;", "&");
      }
      expect(shown).toEqual(Array.from({ length: MAX_PLAN_STEPS }, (_, i) => i + 1));
    }, 300_000);
  });

  it("shows the plan page in under 1 MB, its evidence a page at a time", async () => {
    const admin = await signInOverHttp(app.url, app.tenantA.email);
    const page = await admin.get(`/plans/${planId}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(Buffer.byteLength(html, "utf8")).toBeLessThan(MB);
    // React separates a number from the text beside it with an empty comment.
    expect(html.replaceAll("<!-- -->", "")).toContain(`${MAX_PLAN_SOURCES} sources read`);
    const more = /href="([^"]*claims=[^"]*)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");
    expect(more).toEqual(expect.any(String));
    const next = await admin.get(more as string);
    expect(next.status).toBe(200);
    expect(Buffer.byteLength(await next.text(), "utf8")).toBeLessThan(MB);
  }, 120_000);
});

/**
 * The pages that show what agents stored, each filled at its limits in the
 * shape HTML and React's payload write longest: the inbox with a page of
 * reviews, each proposing many long fields or very many short ones; the plan
 * diagram's conditions; an artifact at its largest; the admin's stalled plans
 * and skill runs.
 */
describe.each(BACKENDS)("every page bounded on %s", (backend) => {
  let app: AppServer;
  let agent: LoopAgent;
  let admin: WebSession;
  /** The inbox's plans: twenty, each waiting on a review. */
  const reviewed: string[] = [];

  beforeAll(async () => {
    app = await startAppServer(backend);
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    admin = await signInOverHttp(app.url, app.tenantA.email);
    const fieldCount = 60;
    const longFields = Object.fromEntries(
      Array.from({ length: fieldCount }, (_, i) => [
        `field${i}`,
        quotes((MAX_RESULT_BYTES - 1_000) / fieldCount / 2 - 20),
      ]),
    );
    const manyFields = Object.fromEntries(Array.from({ length: 12_000 }, (_, i) => [`k${i}`, 1]));
    for (let i = 0; i < 20; i++) {
      const { planId } = await agent.ok("create_research_plan", {
        name: `Waiting ${i}`,
        researchQuestion: "Which proposal holds?",
        steps: [{ stepType: "analyze", instructions: quotes(2_500) }],
      });
      const next = await agent.ok("get_next_step", { planId });
      await agent.ok("request_user_review", {
        planId,
        stepId: next.step.stepId,
        summary: quotes(20_000),
        questions: Array.from({ length: 10 }, (_, q) => `${q} ${quotes(1_990)}`),
        proposedResult: i % 2 === 0 ? longFields : manyFields,
      });
      reviewed.push(planId);
    }
  }, 600_000);
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  it("shows the inbox in under 1 MB, every review's proposal shortened with a way to read it whole", async () => {
    const shown = new Set<string>();
    let path = "/inbox";
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(20);
      const html = await boundedPage(admin, path);
      for (const m of html.matchAll(/href="\/plans\/([0-9a-f-]{36})"/g)) shown.add(m[1] as string);
      if (pages === 0) {
        // The first review proposes 60 long fields: a few are shown, the whole behind a link.
        const link = /<a [^>]*data-testid="review-proposal-all"[^>]*>/.exec(html)?.[0];
        const whole = link && /href="([^"]*)"/.exec(link)?.[1];
        expect(whole).toEqual(expect.any(String));
        const full = await admin.get((whole as string).replaceAll("&amp;", "&"));
        expect(full.status).toBe(200);
        expect(Object.keys(JSON.parse(await full.text()))).toHaveLength(60);
      }
      const link = /<a [^>]*data-testid="inbox-next"[^>]*>/.exec(html)?.[0];
      const next = link && /href="([^"]*)"/.exec(link)?.[1];
      if (!next) break;
      path = next.replaceAll("&amp;", "&");
    }
    expect([...shown].filter((id) => reviewed.includes(id)).sort()).toEqual([...reviewed].sort());
  }, 120_000);

  it("answers the review card in under 1 MB for a proposal of very many fields", async () => {
    const card = await agent.call("read_review_card", { planId: reviewed[1] });
    expect(card.isError).toBe(false);
    expect(
      Buffer.byteLength(card.text, "utf8") + Buffer.byteLength(JSON.stringify(card.data), "utf8"),
    ).toBeLessThan(MB);
    expect(card.data.review.proposal.length).toBeGreaterThan(0);
    expect(card.data.review.proposalFieldsOmitted).toBeGreaterThan(0);
  }, 60_000);

  it("shows a plan of the most steps and conditions at their longest in under 1 MB", async () => {
    const { planId } = await agent.ok("create_research_plan", {
      name: "Many conditions",
      researchQuestion: "How far does the diagram grow?",
      steps: Array.from({ length: MAX_PLAN_STEPS }, (_, i) => ({
        stepType: "analyze",
        instructions: `Step ${i}.`,
      })),
      branchingConditions: Array.from({ length: MAX_PLAN_STEPS }, (_, i) => {
        const prefix = "result.verdict === '";
        return {
          afterStepOrder: i + 1,
          conditionExpression: `${prefix}${quotes(MAX_CONDITION_EXPRESSION_LENGTH - prefix.length - 1)}'`,
          ifTrueAction: "continue",
        };
      }),
    });
    const html = await boundedPage(admin, `/plans/${planId}`);
    expect(html.match(/class="flow-branch/g)).toHaveLength(MAX_PLAN_STEPS);
  }, 120_000);

  it("shows an artifact at its largest in under 1 MB, its content shortened with a way to read it whole", async () => {
    const { artifactId } = await agent.ok("store_research", {
      artifactType: "finding",
      title: quotes(500),
      content: { text: quotes(200_000) },
      contentText: quotes(CONTENT_TEXT_MAX),
      confidence: 0.5,
      sourceUrls: Array.from(
        { length: 100 },
        (_, i) => `https://s${i}.example/${"p".repeat(1_900)}`,
      ),
    });
    const html = await boundedPage(admin, `/library/${artifactId}`);
    for (const part of ["contentText", "content"]) {
      const href = `/library/${artifactId}/full?part=${part}`;
      expect(html).toContain(`href="${href}"`);
      const full = await admin.get(href);
      expect(full.status).toBe(200);
      const text = await full.text();
      expect(part === "contentText" ? text : JSON.parse(text)).toEqual(
        part === "contentText" ? quotes(CONTENT_TEXT_MAX) : { text: quotes(200_000) },
      );
    }
  }, 120_000);

  it("shows the admin's skill runs in under 1 MB with every text of 50 runs at its longest", async () => {
    for (let i = 0; i < 50; i++) {
      const { executionId } = await agent.ok("log_skill_execution", {
        skillName: "research",
        status: "started",
        metadata: {
          topic: quotes(1_000),
          researchType: "general_topic",
          scope: quotes(2_000),
          depthSignals: [],
          routingRationale: quotes(5_000),
          delegatedTo: "deep",
          originalQuery: quotes(5_000),
          skipQuestionsReason: quotes(2_000),
        },
      });
      await agent.ok("log_skill_execution", {
        executionId,
        skillName: "research",
        status: "failed",
        errorMessage: quotes(5_000),
      });
    }
    const html = await boundedPage(admin, "/admin/skills");
    expect(html).toContain("…");
  }, 180_000);

  it("shows the admin's stalled plans in under 1 MB with many failed steps of the longest reason", async () => {
    const failed = 40;
    const { planId, steps } = await agent.ok("create_research_plan", {
      name: "Failing",
      researchQuestion: "How many failures fit?",
      steps: Array.from({ length: failed + 1 }, (_, i) => ({
        stepType: "analyze",
        instructions: `Step ${i}.`,
      })),
    });
    for (const step of steps.slice(0, failed)) {
      await agent.ok("modify_plan", {
        planId,
        action: "fail_step",
        stepId: step.stepId,
        reason: quotes(10_000),
        modificationRationale: "It cannot be done.",
      });
    }
    const html = await boundedPage(admin, "/admin/stalled");
    expect(html).toContain(`href="/plans/${planId}"`);
  }, 180_000);
});
