/**
 * store_research keeps a finding in the tenant's library, with the plan step
 * that produced it: the step's context shows it and search_sources finds it,
 * by a stemmed word; another tenant neither finds it nor can file one under
 * the plan. In process, on PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, tenantContext, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("store_research on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("files the artifact under its step and finds it again by search", async () => {
    const { agent } = tenant;
    const plan = await agent.ok("create_research_plan", {
      name: "Recycling",
      researchQuestion: "How much battery recycling capacity does the EU have?",
      steps: planSteps("search", "synthesize"),
    });
    const next = await agent.ok("get_next_step", { planId: plan.planId });
    const stored = await agent.ok("store_research", {
      artifactType: "finding",
      title: "EU battery recycling capacity 2024",
      content: { tonnesPerYear: 400_000 },
      contentText: "The EU recycled about 400,000 tonnes of batteries in 2024.",
      confidence: 0.7,
      sourceUrls: ["https://example.com/report"],
      planId: plan.planId,
      stepId: next.step.stepId,
    });
    expect(stored).toMatchObject({ planId: plan.planId, stepId: next.step.stepId });

    const context = await agent.ok("get_step_context", {
      planId: plan.planId,
      stepId: next.step.stepId,
    });
    expect(context.artifacts.map((artifact) => artifact.artifactId)).toContain(stored.artifactId);

    const found = await agent.ok("search_sources", { query: "recycling batteries" });
    expect(found.results[0]).toMatchObject({
      artifactId: stored.artifactId,
      title: "EU battery recycling capacity 2024",
      planId: plan.planId,
      stepId: next.step.stepId,
    });
  });

  it("keeps another tenant's search and writes away from the artifact and the plan", async () => {
    const { agent } = tenant;
    const plan = await agent.ok("create_research_plan", {
      name: "Private",
      researchQuestion: "q",
      steps: planSteps("search"),
    });
    await agent.ok("store_research", {
      artifactType: "finding",
      title: "Alpha's private heat pump finding",
      content: {},
      contentText: "Heat pumps in cold climates.",
      confidence: 0.5,
      planId: plan.planId,
    });
    const beta = inProcessAgent(await tenantContext(tenant.handle.db, "Beta"));
    expect((await beta.ok("search_sources", { query: "heat pump" })).results).toEqual([]);
    expect(
      await beta.fails("store_research", {
        artifactType: "finding",
        title: "Planted",
        content: {},
        contentText: "Planted text.",
        confidence: 0.5,
        planId: plan.planId,
      }),
    ).toMatch(/^NOT_FOUND: /);
  });
});
