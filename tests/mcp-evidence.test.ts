/**
 * Evidence over /api/mcp, as a new user's agent meets it (docs/evidence.md), in
 * both protocol eras and on both databases: a plan whose search step reports
 * one page under three spellings and one DOI under two, with a supported key
 * claim, an unsupported and a contested one; a critique that reads them
 * through get_step_context and adds a contradicting source with
 * add_step_evidence; a deliverable citing a page the plan never read and
 * leaving out the key claim's source. The rules themselves are tested in
 * process (tests/use-cases/evidence.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { CLIENT_REVISIONS, connectAgentOn, type LoopAgent, report } from "./support/mcp-client";

const searchReport = {
  ...report,
  webFetches: [
    { url: "https://example.org/heat-pumps?utm_source=newsletter", summary: "COP 2.5 at -15 °C" },
    { url: "http://EXAMPLE.org/heat-pumps/#results" },
    { url: "https://example.org:443/heat-pumps", contentDigest: "cd".repeat(32) },
    { url: "https://doi.org/10.1016/J.ENBUILD.2020.110000" },
    { url: "doi:10.1016/j.enbuild.2020.110000" },
  ],
};

const claims = [
  {
    text: "Heat pumps keep a COP of 2.5 at -15 °C.",
    key: true,
    supports: [{ source: "https://example.org/heat-pumps", quote: "COP of 2.5 at -15 °C" }],
  },
  { text: "Installers are scarce in Finland." },
  {
    text: "Running costs fall by half.",
    supports: [{ source: "https://example.org/heat-pumps", locator: "Table 3" }],
    contradicts: [
      { source: "https://dx.doi.org/10.1016/j.enbuild.2020.110000", quote: "savings of 20%" },
    ],
  },
];

describe.each(BACKENDS)("evidence over /api/mcp on %s", (backend) => {
  let app: AppServer;
  beforeAll(async () => {
    app = await startAppServer(backend);
  }, 120_000);
  afterAll(async () => {
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

    it("records, shows and checks a plan's evidence", async () => {
      const created = await agent.ok("create_research_plan", {
        name: `Heat pumps, evidence over ${revision}`,
        researchQuestion: "Are heat pumps worth it in cold climates?",
        steps: ["search", "critique", "synthesize"].map((stepType, i) => ({
          stepType,
          instructions: `Step ${i + 1}: do the ${stepType} work.`,
        })),
      });
      const planId: string = created.planId;

      const search = await agent.ok("get_next_step", { planId });
      const submitted = await agent.ok("submit_step_result", {
        planId,
        stepId: search.step.stepId,
        result: { sourceCount: 2 },
        stepExecutionReport: searchReport,
        evidence: { claims },
      });
      expect(submitted.evidence).toEqual({
        sources: 2,
        newSources: 2,
        claims: [
          { text: claims[0]?.text, status: "supported" },
          { text: claims[1]?.text, status: "unsupported" },
          { text: claims[2]?.text, status: "contested" },
        ],
      });

      const critique = await agent.ok("get_next_step", { planId });
      expect(critique.step.stepType).toBe("critique");
      const context = await agent.ok("get_step_context", { planId, stepId: critique.step.stepId });
      // One source per page and per DOI; those first read together, by key.
      expect(context.evidence.sources.map((s: { sourceKey: string }) => s.sourceKey)).toEqual([
        "doi:10.1016/j.enbuild.2020.110000",
        "https://example.org/heat-pumps",
      ]);
      expect(context.evidence.claims[0]).toMatchObject({
        status: "supported",
        key: true,
        supports: [{ sourceKey: "https://example.org/heat-pumps", quote: "COP of 2.5 at -15 °C" }],
      });
      const added = await agent.ok("add_step_evidence", {
        planId,
        stepId: search.step.stepId,
        evidence: {
          sources: [{ url: "https://installers.example/finland" }],
          claims: [
            {
              text: "Finland has enough installers.",
              supports: [{ source: "https://installers.example/finland" }],
            },
          ],
        },
      });
      expect(added.evidence).toMatchObject({ newSources: 1 });
      await agent.ok("submit_step_result", {
        planId,
        stepId: critique.step.stepId,
        result: { majorGaps: 1 },
        stepExecutionReport: report,
      });
      const synthesize = await agent.ok("get_next_step", { planId });
      await agent.ok("submit_step_result", {
        planId,
        stepId: synthesize.step.stepId,
        result: {},
        stepExecutionReport: report,
      });

      const stored = await agent.ok("store_research_output", {
        planId,
        outputMediaType: "markdown_report",
        content:
          "Heat pumps hold up in the cold, though savings are disputed (doi:10.1016/j.enbuild.2020.110000). See also https://unread.example/blog.",
      });
      expect(stored.citationCheck.citations).toEqual([
        expect.objectContaining({
          key: "doi:10.1016/j.enbuild.2020.110000",
          status: "plan_source",
        }),
        expect.objectContaining({ key: "https://unread.example/blog", status: "not_read" }),
      ]);
      expect(stored.citationCheck.uncitedKeyClaims).toEqual([
        expect.objectContaining({
          text: claims[0]?.text,
          sourceKeys: ["https://example.org/heat-pumps"],
        }),
      ]);
      expect(stored.hint).toContain("https://unread.example/blog");

      const bad = await agent.call("submit_step_result", {
        planId,
        stepId: search.step.stepId,
        result: {},
        stepExecutionReport: report,
        evidence: { claims: [{ text: "x", supports: [{ source: "nowhere" }] }] },
      });
      expect(bad.isError).toBe(true);
      expect(bad.text).toContain("evidence.claims.0.supports.0.source: must be an http(s) URL");
    });
  });
});
