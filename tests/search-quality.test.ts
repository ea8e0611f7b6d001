/**
 * search_sources' ranking on a fixed library: the 224 artifacts of
 * tests/fixtures/artifacts.json (56 research topics, four artifacts each),
 * stored through store_research with their plans. For each query the expected
 * artifact must be the top hit: plain keyword queries, queries that match only
 * through English stemming (full text), queries with typos that only trigram
 * similarity can match, and web-search syntax. Then the filters, the snippet,
 * the empty library and tenant isolation. On PGlite and on PostgreSQL 15.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { type Agent, connectAgent } from "./support/mcp-client";

type FixtureArtifact = {
  key: string;
  topic: string;
  artifactType: string;
  title: string;
  contentText: string;
  content: Record<string, unknown>;
  confidence: number;
  sourceUrls: string[];
};
type Fixture = {
  topics: { key: string; researchQuestion: string }[];
  artifacts: FixtureArtifact[];
};

const corpus: Fixture = JSON.parse(readFileSync("tests/fixtures/artifacts.json", "utf8"));
const byKey = new Map(corpus.artifacts.map((a) => [a.key, a]));
const questionOf = new Map(corpus.topics.map((t) => [t.key, t.researchQuestion]));

type Kind = "keywords" | "stemming" | "typo" | "syntax";
const QUERIES: [kind: Kind, query: string, expectedKey: string][] = [
  ["keywords", "heat pump installation costs", "heat-pumps/2"],
  ["keywords", "black mass prices", "battery-recycling/2"],
  ["keywords", "net metering", "solar-subsidies/2"],
  ["keywords", "grid connection offshore wind", "offshore-wind/2"],
  ["keywords", "mammography second reader", "ai-radiology/2"],
  ["keywords", "password sharing crackdown", "streaming-economics/3"],
  ["keywords", "congestion charge Stockholm", "urban-congestion-pricing/1"],
  ["keywords", "prescribed burning", "wildfire-risk/3"],
  ["keywords", "phishing resistance WebAuthn", "passkeys/2"],
  ["keywords", "rent cap Berlin", "rent-control/2"],
  ["keywords", "spot instances stateless", "kubernetes-costs/2"],
  // Every word differs from the artifact's own (recycled/recycling, batteries/battery, ...).
  ["stemming", "recycled batteries", "battery-recycling/1"],
  ["stemming", "labelled warnings purchasing", "ultra-processed-food/4"],
  ["stemming", "fines manager overstated", "esg-ratings/2"],
  ["stemming", "retiring ages linked expectancies", "aging-population/2"],
  ["stemming", "scored tests banning phones", "school-phones/2"],
  ["stemming", "commuter distance travelling", "e-bikes/3"],
  ["stemming", "cancelling reactors projects", "nuclear-smr/1"],
  // One or more words misspelt, so full text alone cannot match them all.
  ["typo", "lithum batery recyling", "battery-recycling/1"],
  ["typo", "vector databse comparison", "vector-databases/1"],
  ["typo", "ransomware hospitls", "ransomware/1"],
  ["typo", "congestoin pricing new york", "urban-congestion-pricing/2"],
  ["typo", "desalinaton energy", "desalination/1"],
  ["typo", "semaglutid weight loss", "glp1-drugs/1"],
  ["typo", "coral bleching events", "coral-reefs/1"],
  ["syntax", '"direct air capture" cost per tonne', "carbon-capture/2"],
  ["syntax", "robotaxi -liability", "autonomous-vehicles/1"],
];

const corpusText = corpus.artifacts.map((a) => `${a.title} ${a.contentText}`).join(" ");
const wholeWord = (word: string, text: string) =>
  new RegExp(`(^|[^\\p{L}\\p{N}])${word}([^\\p{L}\\p{N}]|$)`, "iu").test(text);

describe("the search-quality queries themselves", () => {
  it("has at least 200 artifacts and 20 queries, with real stemming-only and typo cases", () => {
    expect(corpus.artifacts.length).toBeGreaterThanOrEqual(200);
    expect(QUERIES.length).toBeGreaterThanOrEqual(20);
    for (const [kind, query, key] of QUERIES) {
      const artifact = byKey.get(key);
      expect(artifact, key).toBeDefined();
      const words = query.match(/[\p{L}\p{N}]+/gu) ?? [];
      if (kind === "stemming") {
        // Not one of the query's words occurs as such in the expected artifact.
        for (const word of words) {
          expect(wholeWord(word, `${artifact?.title} ${artifact?.contentText}`), word).toBe(false);
        }
      }
      if (kind === "typo") {
        // At least one word exists nowhere in the library: a real typo.
        expect(
          words.some((word) => !wholeWord(word, corpusText)),
          query,
        ).toBe(true);
      }
    }
  });
});

describe.each(BACKENDS)("search_sources over the fixture library on %s", (backend) => {
  let app: AppServer;
  let agent: Agent;
  const idOf = new Map<string, string>();
  const keyOf = new Map<string, string>();
  const planOf = new Map<string, string>();

  beforeAll(async () => {
    app = await startAppServer(backend);
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    for (const topic of corpus.topics) {
      const plan = await agent.ok("create_research_plan", {
        name: `[Scan] ${topic.key}`,
        researchQuestion: topic.researchQuestion,
        steps: [{ stepType: "search", instructions: "Gather sources." }],
      });
      planOf.set(topic.key, plan.planId);
    }
    for (const artifact of corpus.artifacts) {
      const stored = await agent.ok("store_research", {
        artifactType: artifact.artifactType,
        title: artifact.title,
        content: artifact.content,
        contentText: artifact.contentText,
        confidence: artifact.confidence,
        sourceUrls: artifact.sourceUrls,
        planId: planOf.get(artifact.topic),
      });
      idOf.set(artifact.key, stored.artifactId);
      keyOf.set(stored.artifactId, artifact.key);
    }
  }, 600_000);
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  it.each(QUERIES)("%s: %s", async (_kind, query, expectedKey) => {
    const { results } = await agent.ok("search_sources", { query, limit: 5 });
    const top = results.map((r: { artifactId: string }) => keyOf.get(r.artifactId));
    expect(top[0], `top hits: ${top.join(", ")}`).toBe(expectedKey);
    const expected = byKey.get(expectedKey);
    expect(results[0]).toMatchObject({
      artifactId: idOf.get(expectedKey),
      title: expected?.title,
      artifactType: expected?.artifactType,
      researchQuestion: questionOf.get(expected?.topic ?? ""),
      planId: planOf.get(expected?.topic ?? ""),
      stepId: null,
      sourceUrls: expected?.sourceUrls,
    });
    const scores = results.map((r: { score: number }) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(Number.isNaN(Date.parse(results[0].createdAt))).toBe(false);
  });

  it("marks the matched terms in the snippet, and starts the text when only the title matched", async () => {
    const { results } = await agent.ok("search_sources", { query: "black mass prices", limit: 1 });
    expect(results[0].snippet).toContain("**Black** **mass**");
    const typo = await agent.ok("search_sources", { query: "lithum batery recyling", limit: 1 });
    const text = byKey.get("battery-recycling/1")?.contentText ?? "";
    expect(typo.results[0].snippet).toBe(text.length > 240 ? `${text.slice(0, 240)}…` : text);
  });

  it("leaves out artifacts with an excluded word", async () => {
    const { results } = await agent.ok("search_sources", { query: "quantum -cryptography" });
    expect(results.length).toBeGreaterThan(0);
    for (const hit of results) {
      const artifact = byKey.get(keyOf.get(hit.artifactId) ?? "");
      expect(`${artifact?.title} ${artifact?.contentText}`).not.toMatch(/cryptograph/i);
    }
  });

  it("filters by plan, artifact type and date, and honours the limit", async () => {
    const planId = planOf.get("heat-pumps");
    const inPlan = await agent.ok("search_sources", { query: "heat pump", planId, limit: 50 });
    expect(inPlan.results.length).toBe(4);
    expect(inPlan.results.every((r: { planId: string }) => r.planId === planId)).toBe(true);

    const critiques = await agent.ok("search_sources", {
      query: "bias",
      artifactType: "critique",
      limit: 50,
    });
    expect(critiques.results.length).toBeGreaterThan(2);
    expect(
      critiques.results.every((r: { artifactType: string }) => r.artifactType === "critique"),
    ).toBe(true);

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect(
      (await agent.ok("search_sources", { query: "heat pump", since: tomorrow })).results,
    ).toEqual([]);
    const lastYear = new Date(Date.now() - 365 * 86_400_000).toISOString();
    expect(
      (await agent.ok("search_sources", { query: "heat pump", since: lastYear })).results.length,
    ).toBeGreaterThan(0);

    expect((await agent.ok("search_sources", { query: "costs" })).results).toHaveLength(10);
    expect((await agent.ok("search_sources", { query: "costs", limit: 3 })).results).toHaveLength(
      3,
    );
  });

  it("answers a query that matches nothing, only stop words or only exclusions with []", async () => {
    for (const query of ["zxqv wvut", "the of and", "-heat"]) {
      expect((await agent.ok("search_sources", { query })).results, query).toEqual([]);
    }
  });

  it("searches only the caller's own library: another tenant's is empty", async () => {
    const beta = await connectAgent(app.mcpUrl, app.tenantB.key);
    try {
      expect((await beta.ok("search_sources", { query: "heat pump" })).results).toEqual([]);
      // Another tenant's plan id as a filter reveals nothing either.
      const planId = planOf.get("heat-pumps");
      expect((await beta.ok("search_sources", { query: "heat pump", planId })).results).toEqual([]);
    } finally {
      await beta.close();
    }
  });
});
