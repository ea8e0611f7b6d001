/**
 * submit_step_result on a step nobody has pulled yet (the timing edge case).
 * In process, on PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("submit_step_result on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("accepts a result for a step still pending (the timing edge case)", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Edge",
      researchQuestion: "q",
      steps: planSteps("search", "analyze"),
    });
    const submitted = await tenant.agent.submit(created.planId, created.steps[0].stepId);
    expect(submitted).toMatchObject({ stepStatus: "completed", planStatus: "executing" });
    expect(
      (await tenant.agent.ok("get_next_step", { planId: created.planId })).step.stepOrder,
    ).toBe(2);
  });
});
