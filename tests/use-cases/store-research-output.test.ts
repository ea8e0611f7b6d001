/**
 * store_research_output keeps the deliverable with its plan; the newest one
 * stored is the plan's deliverable; another tenant cannot store one under the
 * plan. In process, on PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, tenantContext, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("store_research_output on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("keeps each deliverable and answers the newest as the plan's", async () => {
    const { agent } = tenant;
    const plan = await agent.ok("create_research_plan", {
      name: "Delivered",
      researchQuestion: "q",
      steps: planSteps("synthesize"),
    });
    await agent.submit(plan.planId, plan.steps[0].stepId);
    const deliver = (content: string) =>
      agent.ok("store_research_output", {
        planId: plan.planId,
        outputMediaType: "text/markdown",
        content,
      });
    const first = await deliver("# Draft");
    const second = await deliver("# Final");
    expect(second).toMatchObject({ planId: plan.planId, executionId: null });
    expect(second.outputId).not.toBe(first.outputId);

    const context = await agent.ok("get_research_context", { planId: plan.planId });
    expect(context.deliverable).toMatchObject({
      outputId: second.outputId,
      outputMediaType: "text/markdown",
      content: "# Final",
    });

    const beta = inProcessAgent(await tenantContext(tenant.handle.db, "Beta"));
    expect(
      await beta.fails("store_research_output", {
        planId: plan.planId,
        outputMediaType: "text/markdown",
        content: "Planted",
      }),
    ).toMatch(/^NOT_FOUND: /);
  });
});
