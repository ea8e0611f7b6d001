/**
 * search_sources over the tenant's library: stemmed words and a typo in a
 * title find an artifact; the plan, type and date filters narrow the hits.
 * In process, on PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("search_sources on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("finds by stem and by a title typo, and filters by plan, type and date", async () => {
    const { agent } = tenant;
    const plan = await agent.ok("create_research_plan", {
      name: "Recycling",
      researchQuestion: "q",
      steps: planSteps("search"),
    });
    const store = (artifactType: string, title: string, planId?: string) =>
      agent.ok("store_research", {
        artifactType,
        title,
        content: {},
        contentText: `${title}: what the sources say about it.`,
        confidence: 0.6,
        planId,
      });
    const inPlan = await store("finding", "Battery recycling capacity", plan.planId);
    const elsewhere = await store("analysis", "Recycling of textiles");
    const ids = async (args: Record<string, unknown>) =>
      (await agent.ok("search_sources", args)).results.map((hit) => hit.artifactId).sort();

    expect(await ids({ query: "recycled" })).toEqual(
      [inPlan.artifactId, elsewhere.artifactId].sort(),
    );
    expect(await ids({ query: "recyling" })).toEqual(
      [inPlan.artifactId, elsewhere.artifactId].sort(),
    );
    expect(await ids({ query: "recycling", planId: plan.planId })).toEqual([inPlan.artifactId]);
    expect(await ids({ query: "recycling", artifactType: "analysis" })).toEqual([
      elsewhere.artifactId,
    ]);
    expect(await ids({ query: "recycling", since: "9999-01-01" })).toEqual([]);
    expect(await ids({ query: "recycling", since: "2000-01-01" })).toHaveLength(2);
  });
});
