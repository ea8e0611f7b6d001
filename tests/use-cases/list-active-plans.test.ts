/**
 * list_active_plans: the tenant's plans that can still go on, most recently
 * active first, with their progress; completed and failed plans, and other
 * tenants' plans, are left out; a page at a time with a cursor. In process, on
 * PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, tenantContext, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("list_active_plans on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("lists open plans by latest activity and leaves out ended ones and other tenants'", async () => {
    const { agent } = tenant;
    const create = (
      name: string,
      steps = planSteps("search", "analyze"),
      conditions: Record<string, unknown>[] = [],
    ) =>
      agent.ok("create_research_plan", {
        name,
        researchQuestion: `${name}?`,
        steps,
        branchingConditions: conditions,
      });
    const older = await create("Older");
    const newer = await create("Newer");
    const done = await create("Done", planSteps("search"));
    await agent.submit(done.planId, done.steps[0].stepId);
    const failing = await create("Failing", planSteps("search", "analyze"), [
      { afterStepOrder: 1, conditionExpression: "confidence >= 0", ifTrueAction: "fail" },
    ]);
    expect((await agent.submit(failing.planId, failing.steps[0].stepId)).planStatus).toBe("failed");
    // Work on the older plan makes it the most recently active.
    await agent.ok("get_next_step", { planId: older.planId });
    const beta = inProcessAgent(await tenantContext(tenant.handle.db, "Beta"));
    await beta.ok("create_research_plan", {
      name: "Beta's",
      researchQuestion: "q",
      steps: planSteps("search"),
    });

    const { plans } = await agent.ok("list_active_plans", {});
    expect(plans.map((plan) => plan.name)).toEqual(["Older", "Newer"]);
    expect(plans[0]).toMatchObject({
      planId: older.planId,
      status: "executing",
      progress: { total: 2, inProgress: 1, pending: 1, percent: 0 },
    });
    expect(plans[1]).toMatchObject({ planId: newer.planId, status: "planning" });
    expect((await agent.ok("list_active_plans", { limit: 1 })).plans).toHaveLength(1);
  });

  it("pages with a cursor: each plan once, in order, even when one is added meanwhile", async () => {
    const agent = inProcessAgent(await tenantContext(tenant.handle.db, "Paged"));
    // Each plan made in a later millisecond than the one before returned, so
    // no two share a time of last activity (a tie would order them by id).
    let returnedAt = 0;
    const createInItsOwnMillisecond = async (name: string) => {
      while (Date.now() <= returnedAt) await new Promise((resolve) => setImmediate(resolve));
      await agent.ok("create_research_plan", {
        name,
        researchQuestion: "q",
        steps: planSteps("search"),
      });
      returnedAt = Date.now();
    };
    for (const name of ["A", "B", "C", "D", "E"]) await createInItsOwnMillisecond(name);
    const first = await agent.ok("list_active_plans", { limit: 2 });
    expect(first.plans.map((plan) => plan.name)).toEqual(["E", "D"]);
    // A plan created after the first page belongs before it, so no later page shows it.
    await createInItsOwnMillisecond("F");
    const seen = [...first.plans.map((plan) => plan.name)];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await agent.ok("list_active_plans", { limit: 2, cursor });
      seen.push(...page.plans.map((plan) => plan.name));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(["E", "D", "C", "B", "A"]);
    expect(await agent.fails("list_active_plans", { cursor: "not-a-cursor" })).toMatch(
      /^VALIDATION_ERROR: cursor is not one this list gave: pass the previous answer's nextCursor/,
    );
  });
});
