/**
 * A plan's evidence (docs/evidence.md): sources merged by canonical key from
 * the execution report, explicit evidence and artifacts; claims with their
 * support, unsupported and contested flagged; evidence added to a completed
 * step; the trail's rows in the chain; the readers (get_step_context,
 * get_research_context); the deliverable's citation check; limits, tenancy and
 * errors. In process, on PGlite and on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { verifyPlanTrail } from "@/lib/services/audit/audit-chain";
import { exportPlanEvidence } from "@/lib/services/evidence/export-evidence";
import { MAX_EXTRACT_CHARS } from "@/lib/services/evidence/record-evidence";
import { getPlanPage } from "@/lib/services/views/plan-page";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, tenantContext, useFreshTenant } from "../support/in-process";
import { report } from "../support/mcp-client";
import { readRows } from "../support/rows";

const DIGEST = "ab".repeat(32);

/** The acceptance plan's first step: one page under three spellings, one DOI under two, three claims. */
const searchEvidence = {
  stepExecutionReport: {
    ...report,
    webFetches: [
      { url: "https://example.org/battery-report?utm_source=news", summary: "Capacity 12 GWh" },
      "HTTP://Example.org/battery-report/#section-2",
      { url: "https://example.org:443/battery-report", contentDigest: DIGEST },
      { url: "https://doi.org/10.1038/S41586-020-2649-2" },
      "doi:10.1038/s41586-020-2649-2",
      { note: "a fetch that names no page is left out" },
    ],
  },
  evidence: {
    sources: [{ url: "arXiv:2101.01234v2", title: "Recycling yields", extract: "Yield 95%" }],
    claims: [
      {
        text: "EU recycling capacity reached 12 GWh in 2024.",
        key: true,
        supports: [
          {
            source: "https://example.org/battery-report",
            quote: "capacity of 12 GWh",
            locator: "p. 4",
          },
        ],
      },
      { text: "Most capacity is in Germany." },
      {
        text: "Recycling yields exceed 90%.",
        supports: [{ source: "https://arxiv.org/abs/2101.01234", quote: "yield of 95%" }],
        contradicts: [
          { source: "https://dx.doi.org/10.1038/s41586-020-2649-2", locator: "Fig. 2" },
        ],
      },
    ],
  },
};

describe.each(BACKENDS)("evidence on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  /**
   * Runs `calls` at once with the plan's trail head locked by another
   * transaction until every call waits for a lock, so each has made its
   * checks before any commits, unless the plan's lock orders them: the
   * head's lock is the last a change of evidence takes (its audit row), and
   * without the head held the three calls finished one after another often
   * enough that an unlocked check passed. PGlite runs one transaction at a
   * time, so there the calls run as they come.
   */
  async function whileTrailHeld<T>(planId: string, calls: () => Promise<T>[]): Promise<T[]> {
    if (backend === "pglite") return Promise.all(calls());
    let pending: Promise<T[]> = Promise.resolve([]);
    await tenant.handle.db.transaction(async (tx) => {
      await tx.execute(
        sql`select 1 from plan_audit_head where plan_id = ${planId}::uuid for update`,
      );
      const started = calls();
      pending = Promise.all(started);
      const giveUp = Date.now() + 10_000;
      for (let waiting = 0; waiting < started.length; ) {
        if (Date.now() > giveUp) throw new Error(`${waiting} of the calls waited for a lock`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        const [row] = await readRows<{ n: number }>(
          tenant.handle.db,
          sql`select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'`,
        );
        waiting = row?.n ?? 0;
      }
    });
    return pending;
  }

  async function planWithEvidence() {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Battery recycling",
      researchQuestion: "How much battery recycling capacity does the EU have?",
      steps: planSteps("search", "analyze", "critique"),
    });
    const [search, analyze, critique] = created.steps.map((s) => s.stepId);
    if (!search || !analyze || !critique) throw new Error("three steps expected");
    const submitted = await tenant.agent.submit(created.planId, search, searchEvidence);
    return { planId: created.planId, search, analyze, critique, submitted };
  }

  it("merges a step's reads into one source per page, DOI and paper, and flags its claims", async () => {
    const { planId, submitted, critique } = await planWithEvidence();
    expect(submitted.evidence).toEqual({
      sources: 3,
      newSources: 3,
      claims: [
        { text: "EU recycling capacity reached 12 GWh in 2024.", status: "supported" },
        { text: "Most capacity is in Germany.", status: "unsupported" },
        { text: "Recycling yields exceed 90%.", status: "contested" },
      ],
    });
    // A critique step reads the evidence through get_step_context.
    const context = await tenant.agent.ok("get_step_context", { planId, stepId: critique });
    expect(context.evidence.sources).toEqual([
      expect.objectContaining({
        sourceKey: "arxiv:2101.01234",
        kind: "arxiv",
        href: "https://arxiv.org/abs/2101.01234",
        title: "Recycling yields",
        extract: "Yield 95%",
        firstStepOrder: 1,
      }),
      expect.objectContaining({
        sourceKey: "doi:10.1038/s41586-020-2649-2",
        kind: "doi",
        contentDigest: null,
      }),
      expect.objectContaining({
        sourceKey: "https://example.org/battery-report",
        href: "https://example.org/battery-report",
        extract: "Capacity 12 GWh",
        contentDigest: `sha256:${DIGEST}`,
      }),
    ]);
    expect(context.evidence.claims.map((c) => [c.text, c.status, c.key])).toEqual([
      ["EU recycling capacity reached 12 GWh in 2024.", "supported", true],
      ["Most capacity is in Germany.", "unsupported", false],
      ["Recycling yields exceed 90%.", "contested", false],
    ]);
    expect(context.evidence.claims[0]?.supports).toEqual([
      {
        sourceKey: "https://example.org/battery-report",
        href: "https://example.org/battery-report",
        quote: "capacity of 12 GWh",
        quoteShortened: false,
        locator: "p. 4",
      },
    ]);
    expect(context.evidence.claims[2]?.contradicts).toEqual([
      expect.objectContaining({ sourceKey: "doi:10.1038/s41586-020-2649-2", locator: "Fig. 2" }),
    ]);
    const resumed = await tenant.agent.ok("get_research_context", { planId });
    expect(resumed.evidence).toEqual(context.evidence);
  });

  it("writes the evidence's audit row in the chain, with the result's", async () => {
    const { planId, search } = await planWithEvidence();
    const rows = await readRows<{ event_type: string; step_id: string; payload: unknown }>(
      tenant.handle.db,
      sql`select event_type, step_id, payload from plan_audit_log
        where plan_id = ${planId}::uuid order by chain_index`,
    );
    expect(rows.map((r) => r.event_type).slice(-2)).toEqual([
      "step_completed",
      "evidence_recorded",
    ]);
    expect(rows.at(-1)).toMatchObject({
      step_id: search,
      payload: {
        origin: "step_result",
        stepOrder: 1,
        newSources: [
          "arxiv:2101.01234",
          "https://example.org/battery-report",
          "doi:10.1038/s41586-020-2649-2",
        ],
        claims: [
          {
            status: "supported",
            supports: ["https://example.org/battery-report"],
            contradicts: [],
          },
          { status: "unsupported", supports: [], contradicts: [] },
          {
            status: "contested",
            supports: ["arxiv:2101.01234"],
            contradicts: ["doi:10.1038/s41586-020-2649-2"],
          },
        ],
      },
    });
    expect(await verifyPlanTrail(tenant.handle.db, planId)).toMatchObject({ verified: true });
  });

  it("refuses a claim citing a source the plan never read, and writes nothing of the submit", async () => {
    const { planId, analyze } = await planWithEvidence();
    const error = await tenant.agent.fails("submit_step_result", {
      planId,
      stepId: analyze,
      result: { ok: true },
      stepExecutionReport: report,
      evidence: {
        claims: [
          { text: "Read elsewhere.", supports: [{ source: "https://unread.example/page" }] },
          { text: "Read before.", supports: [{ source: "doi:10.1038/s41586-020-2649-2" }] },
        ],
      },
    });
    expect(error).toBe(
      'VALIDATION_ERROR: evidence.claims[0].supports[0].source: "https://unread.example/page" is not a source of the plan; report it in webFetches or evidence.sources first.',
    );
    const step = (await tenant.agent.ok("get_research_context", { planId })).steps[1];
    expect(step?.status).not.toBe("completed");
    // Citing a source an earlier step read is fine.
    const again = await tenant.agent.submit(planId, analyze, {
      evidence: {
        claims: [{ text: "Read before.", supports: [{ source: "doi:10.1038/s41586-020-2649-2" }] }],
      },
    });
    expect(again.evidence).toEqual({
      sources: 0,
      newSources: 0,
      claims: [{ text: "Read before.", status: "supported" }],
    });
  });

  it("names each malformed field of the evidence", async () => {
    const { planId, analyze } = await planWithEvidence();
    const error = await tenant.agent.fails("submit_step_result", {
      planId,
      stepId: analyze,
      result: {},
      stepExecutionReport: report,
      evidence: {
        sources: [{ url: "not a link" }, { url: "https://ok.example", contentDigest: "md5:1" }],
        claims: [{ text: "", supports: [{ source: "ftp://x.example/f" }] }],
        extra: true,
      },
    });
    expect(error).toMatch(/^VALIDATION_ERROR: /);
    expect(error).toContain("evidence.extra");
    const fields = await tenant.agent.fails("submit_step_result", {
      planId,
      stepId: analyze,
      result: {},
      stepExecutionReport: report,
      evidence: {
        sources: [{ url: "not a link" }, { url: "https://ok.example", contentDigest: "md5:1" }],
        claims: [{ text: "", supports: [{ source: "ftp://x.example/f" }] }],
      },
    });
    for (const path of [
      "evidence.sources.0.url: must be an http(s) URL, a DOI",
      "evidence.sources.1.contentDigest: must be the SHA-256",
      "evidence.claims.0.text: must not be empty",
      "evidence.claims.0.supports.0.source: must be an http(s) URL",
    ]) {
      expect(fields).toContain(path);
    }
  });

  it("bounds the counts: claims per change, sources per plan", async () => {
    const { planId, analyze } = await planWithEvidence();
    const claims = Array.from({ length: 51 }, (_, i) => ({ text: `Claim ${i}` }));
    expect(
      await tenant.agent.fails("submit_step_result", {
        planId,
        stepId: analyze,
        result: {},
        stepExecutionReport: report,
        evidence: { claims },
      }),
    ).toContain("evidence.claims: Too big: expected array to have <=50 items");
    const pages = (from: number) =>
      Array.from({ length: 100 }, (_, i) => ({ url: `https://many.example/p${from + i}` }));
    for (let batch = 0; batch < 4; batch++) {
      await tenant.agent.ok("add_step_evidence", {
        planId,
        stepId: (await tenant.agent.ok("get_research_context", { planId })).steps[0]?.stepId,
        evidence: { sources: pages(batch * 100) },
      });
    }
    // 3 + 400 held; 100 more would pass 500.
    const over = await tenant.agent.fails("submit_step_result", {
      planId,
      stepId: analyze,
      result: {},
      stepExecutionReport: report,
      evidence: { sources: pages(1000) },
    });
    expect(over).toBe(
      "VALIDATION_ERROR: evidence: the plan would read 503 sources, over the limit of 500; record the sources the findings rest on, not every page visited.",
    );
  });

  it("holds the per-plan limits when additions run at once", async () => {
    const { planId, search, analyze } = await planWithEvidence();
    await tenant.agent.submit(planId, analyze);
    const pages = (from: number) =>
      Array.from({ length: 100 }, (_, i) => ({ url: `https://race.example/p${from + i}` }));
    for (let batch = 0; batch < 3; batch++) {
      await tenant.agent.ok("add_step_evidence", {
        planId,
        stepId: search,
        evidence: { sources: pages(batch * 100) },
      });
    }
    // 303 held: each of three additions of 100 (to two steps, and an
    // artifact's links) fits alone, no two of them together.
    const answers = await whileTrailHeld(planId, () => [
      ...[search, analyze].map((stepId, i) =>
        tenant.agent.call("add_step_evidence", {
          planId,
          stepId,
          evidence: { sources: pages((i + 1) * 1000) },
        }),
      ),
      tenant.agent.call("store_research", {
        artifactType: "finding",
        title: "Race",
        content: {},
        contentText: "Race.",
        confidence: 0.5,
        sourceUrls: pages(3000).map((page) => page.url),
        planId,
      }),
    ]);
    expect(answers.filter((answer) => !answer.isError)).toHaveLength(1);
    for (const refused of answers.filter((answer) => answer.isError)) {
      expect(refused.text).toMatch(/^VALIDATION_ERROR: evidence: the plan would read 503 sources/);
    }
    const evidence = (await tenant.agent.ok("read_evidence", { planId })).evidence;
    expect(evidence.sourcesTotal).toBe(403);
  });

  it("refuses evidence past the plan's total of text, naming it", async () => {
    const { planId, search } = await planWithEvidence();
    const extract = "e".repeat(MAX_EXTRACT_CHARS);
    let refusal = "";
    for (let batch = 0; !refusal && batch < 30; batch++) {
      const answer = await tenant.agent.call("add_step_evidence", {
        planId,
        stepId: search,
        evidence: {
          sources: Array.from({ length: 100 }, (_, i) => ({
            url: `https://total.example/${batch}/${i}/${"p".repeat(1_900)}`,
            title: "t".repeat(500),
            extract,
          })),
        },
      });
      if (answer.isError) refusal = answer.text;
    }
    // 500 such sources are about 4 MB: the count refuses first.
    expect(refusal).toMatch(/^VALIDATION_ERROR: evidence: the plan would read \d+ sources/);
    const claims = Array.from({ length: 50 }, (_, i) => ({
      text: `${i} ${"c".repeat(1_990)}`,
      supports: Array.from({ length: 20 }, () => ({
        source: "https://example.org/battery-report",
        quote: "q".repeat(2_000),
      })),
    }));
    let total = "";
    for (let batch = 0; !total && batch < 10; batch++) {
      const answer = await tenant.agent.call("add_step_evidence", {
        planId,
        stepId: search,
        evidence: { claims },
      });
      if (answer.isError) total = answer.text;
    }
    expect(total).toMatch(
      /^VALIDATION_ERROR: evidence: the plan's evidence would hold [\d,]+ bytes of text, over the limit of 8,388,608/,
    );
  });

  it("adds evidence to a completed step, audited; refuses it for an open step and across tenants", async () => {
    const { planId, search, analyze } = await planWithEvidence();
    const added = await tenant.agent.ok("add_step_evidence", {
      planId,
      stepId: search,
      evidence: {
        sources: [{ url: "https://critique.example/rebuttal?fbclid=x" }],
        claims: [
          {
            text: "Capacity figures are overstated.",
            supports: [{ source: "https://critique.example/rebuttal", quote: "overstated by 30%" }],
          },
        ],
      },
    });
    expect(added).toEqual({
      planId,
      stepId: search,
      evidence: {
        sources: 1,
        newSources: 1,
        claims: [{ text: "Capacity figures are overstated.", status: "supported" }],
      },
    });
    const [row] = await readRows<{ event_type: string; payload: { origin: string } }>(
      tenant.handle.db,
      sql`select event_type, payload from plan_audit_log
        where plan_id = ${planId}::uuid order by chain_index desc limit 1`,
    );
    expect(row).toMatchObject({ event_type: "evidence_recorded", payload: { origin: "added" } });

    expect(
      await tenant.agent.fails("add_step_evidence", {
        planId,
        stepId: analyze,
        evidence: { claims: [{ text: "Too early." }] },
      }),
    ).toBe(
      "INVALID_TRANSITION: Step 2 is pending: evidence is added only to a completed step. Send it with the step's result (submit_step_result's evidence) instead.",
    );
    expect(
      await tenant.agent.fails("add_step_evidence", { planId, stepId: search, evidence: {} }),
    ).toBe("VALIDATION_ERROR: evidence: give at least one source or claim to add.");

    const other = inProcessAgent(
      await tenantContext(tenant.handle.db, `Other${backend}${planId.slice(0, 4)}`),
    );
    expect(
      await other.fails("add_step_evidence", {
        planId,
        stepId: search,
        evidence: { claims: [{ text: "Not mine." }] },
      }),
    ).toMatch(/^NOT_FOUND: No plan /);
    expect(await other.fails("get_step_context", { planId, stepId: search })).toMatch(
      /^NOT_FOUND: /,
    );
  });

  it("makes an artifact's source URLs sources of its plan", async () => {
    const { planId, analyze } = await planWithEvidence();
    await tenant.agent.ok("store_research", {
      artifactType: "finding",
      title: "Capacity table",
      content: { gwh: 12 },
      contentText: "12 GWh",
      confidence: 0.8,
      sourceUrls: ["https://example.org/battery-report#table", "https://stats.example/eu"],
      planId,
      stepId: analyze,
    });
    const { evidence } = await tenant.agent.ok("get_research_context", { planId });
    expect(evidence.sources.map((s) => [s.sourceKey, s.firstStepOrder])).toEqual([
      ["arxiv:2101.01234", 1],
      ["doi:10.1038/s41586-020-2649-2", 1],
      ["https://example.org/battery-report", 1],
      ["https://stats.example/eu", 2],
    ]);
  });

  it("checks the deliverable's citations: sources read, never read, key claims without their source", async () => {
    const { planId, search, analyze, critique } = await planWithEvidence();
    await tenant.agent.submit(planId, analyze);
    await tenant.agent.submit(planId, critique);
    const content = [
      "# EU battery recycling",
      "Yields exceed 90% [1]; see also doi:10.1038/S41586-020-2649-2 and a blog [2].",
      "",
      "## References",
      "1. https://arxiv.org/pdf/2101.01234v1",
      "2. https://blog.unread.example/post?utm_campaign=x",
      "",
      "Germany leads [3].",
    ].join("\n");
    const stored = await tenant.agent.ok("store_research_output", {
      planId,
      outputMediaType: "markdown_report",
      content,
    });
    expect(stored.citationCheck).toEqual({
      citations: [
        {
          written: "doi:10.1038/S41586-020-2649-2",
          key: "doi:10.1038/s41586-020-2649-2",
          href: "https://doi.org/10.1038/s41586-020-2649-2",
          status: "plan_source",
        },
        {
          written: "https://arxiv.org/pdf/2101.01234v1",
          key: "arxiv:2101.01234",
          href: "https://arxiv.org/abs/2101.01234",
          status: "plan_source",
        },
        {
          written: "https://blog.unread.example/post?utm_campaign=x",
          key: "https://blog.unread.example/post",
          href: "https://blog.unread.example/post",
          status: "not_read",
        },
      ],
      unresolvedReferences: ["[3]"],
      uncitedKeyClaims: [
        {
          stepId: search,
          stepOrder: 1,
          text: "EU recycling capacity reached 12 GWh in 2024.",
          sourceKeys: ["https://example.org/battery-report"],
        },
      ],
      truncated: false,
    });
    expect(stored.hint).toBe(
      'Citations to fix before presenting: 1 citation(s) name sources this plan never read (https://blog.unread.example/post?utm_campaign=x): read them in a step, or cite the sources the findings came from; numbered references without a linked entry: [3]; 1 key claim(s) are stated without any of their sources cited ("EU recycling capacity reached 12 GWh in 2024."). Store the corrected deliverable again.',
    );
    const { deliverable } = await tenant.agent.ok("get_research_context", { planId });
    expect(deliverable?.citationCheck).toEqual(stored.citationCheck);

    const fixed = await tenant.agent.ok("store_research_output", {
      planId,
      outputMediaType: "markdown_report",
      content: "Capacity reached 12 GWh (https://example.org/battery-report).",
    });
    expect(fixed.hint).toBe(
      "Stored, and every citation checks out. Present the deliverable to the user, then record their reaction with submit_research_feedback.",
    );
    expect(fixed.citationCheck.uncitedKeyClaims).toEqual([]);
  });

  it("shows the evidence on the plan page and exports it with the sources' digests", async () => {
    const { planId } = await planWithEvidence();
    const page = await getPlanPage(tenant.agent.ctx, planId);
    const context = await tenant.agent.ok("get_research_context", { planId });
    expect(page?.evidence).toEqual(context.evidence);
    const exported = await exportPlanEvidence(tenant.agent.ctx, planId);
    expect(exported).toMatchObject({
      format: "cairn-evidence/1",
      planId,
      planName: "Battery recycling",
      sources: context.evidence.sources,
      claims: context.evidence.claims,
    });
    expect(exported.sources.map((s) => s.contentDigest)).toEqual([null, null, `sha256:${DIGEST}`]);
    const other = await tenantContext(tenant.handle.db, `Export${backend}${planId.slice(0, 4)}`);
    await expect(exportPlanEvidence(other, planId)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("refuses an offset past a value's end with its length, however large the offset", async () => {
    const { planId, search } = await planWithEvidence();
    // PostgreSQL's int ends at 2^31 - 1: an offset beyond it once failed as INTERNAL_ERROR.
    for (const offset of [2 ** 31 - 2, 2 ** 31 - 1, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
      expect(
        await tenant.agent.fails("read_evidence", {
          planId,
          of: search,
          part: "instructions",
          offset,
        }),
        String(offset),
      ).toMatch(
        /^VALIDATION_ERROR: offset: instructions of .* has \d+ characters; start below that/,
      );
    }
  });

  it("keeps the one-statement submit for a result without evidence", async () => {
    const { planId, analyze } = await planWithEvidence();
    const plain = await tenant.agent.submit(planId, analyze);
    expect(plain).not.toHaveProperty("evidence");
  });
});
