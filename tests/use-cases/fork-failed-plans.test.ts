/**
 * Bulk fork from failure (docs/history-and-forks.md, "Forks from failure"):
 * the team's failed plans by filter, each forked from its failed step through
 * fork_plan's use case, once however often the action is sent, and another
 * team's never. In process, on PGlite and on PostgreSQL 15; the page and its
 * form are e2e/history-forks.spec.ts's.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { planAuditLog } from "../../lib/db/schema";
import {
  FORK_FAILED_BYTES,
  forkFailedPlans,
  listFailedPlans,
} from "../../lib/services/plans/fork-failed-plans";
import type { ServiceContext } from "../../lib/services/shared/context";
import { BACKENDS } from "../support/databases";
import {
  extractStep,
  type InProcessAgent,
  inProcessAgent,
  planSteps,
  signedInAdmin,
  tenantContext,
  useFreshTenant,
} from "../support/in-process";

describe.each(BACKENDS)("bulk fork from failure on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const plans: Record<string, string> = {};
  const as = {} as { admin: ServiceContext; beta: InProcessAgent; betaAdmin: ServiceContext };

  async function create(agent: InProcessAgent, name: string, steps: unknown[], extra = {}) {
    const created = await agent.ok("create_research_plan", {
      name,
      researchQuestion: "Are heat pumps worth it?",
      steps,
      ...extra,
    });
    plans[name] = created.planId;
    return created;
  }

  /** A plan whose step 2 the agent failed after step 1 was done (with step 2 the last, the plan completes). */
  async function failedByAgent(agent: InProcessAgent, name: string, types = ["search", "analyze"]) {
    const { planId } = await create(agent, name, planSteps(...types));
    const first = await agent.ok("get_next_step", { planId });
    await agent.submit(planId, first.step.stepId);
    const second = await agent.ok("get_next_step", { planId });
    await agent.ok("modify_plan", {
      planId,
      action: "fail_step",
      stepId: second.step.stepId,
      reason: "The sources disagree.",
      modificationRationale: "Cannot go on.",
    });
  }

  beforeAll(async () => {
    const a = tenant.agent;
    as.admin = await signedInAdmin(tenant.handle.db, a.ctx);
    // Paused: step 1 done, step 2's tool failed.
    const paused = await create(a, "Prices paused", [planSteps("search")[0], extractStep]);
    await a.submit(
      paused.planId,
      (await a.ok("get_next_step", { planId: paused.planId })).step.stepId,
    );
    expect((await a.ok("get_next_step", { planId: paused.planId })).status).toBe("paused");
    // Step 2's tool failed while step 1 was still in progress: no fork carries step 1.
    const running = await create(a, "Prices running", [planSteps("search")[0], extractStep]);
    await a.ok("get_next_step", { planId: running.planId });
    expect(
      (await inProcessAgent(a.ctx).ok("get_next_step", { planId: running.planId })).status,
    ).toBe("paused");
    await failedByAgent(a, "Agent failed");
    // A branching condition failed the plan after step 1: that step is the failed one.
    const branch = await create(a, "Branch failed", planSteps("search", "analyze"), {
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "confidence < 0.5",
          ifTrueAction: "fail",
          actionParams: { reason: "Too unsure to go on." },
        },
      ],
    });
    const first = await a.ok("get_next_step", { planId: branch.planId });
    await a.submit(branch.planId, first.step.stepId, { confidence: 0.2 });
    expect((await a.ok("get_plan_status", { planId: branch.planId })).status).toBe("failed");
    // Not failed plans: one going well, and a cancelled one that holds a failed step.
    await create(a, "Going well", planSteps("search"));
    await failedByAgent(a, "Cancelled", ["search", "analyze", "synthesize"]);
    await a.ok("cancel_plan", { planId: plans.Cancelled, reason: "Not needed." });
    // Another team's failed plan.
    as.beta = inProcessAgent(await tenantContext(tenant.handle.db, "Beta"));
    await failedByAgent(as.beta, "Beta failed");
    as.betaAdmin = { ...as.beta.ctx, actor: { type: "user", id: null, label: "Beta admin" } };
  });

  const names = (page: Awaited<ReturnType<typeof listFailedPlans>>) =>
    page.plans.map((plan) => plan.name).sort();

  it("lists the team's failed plans with their failed step, by tool, text and day", async () => {
    const all = await listFailedPlans(as.admin, { filter: {} });
    expect(all.matching).toBe(4);
    expect(all.more).toBe(false);
    expect(names(all)).toEqual([
      "Agent failed",
      "Branch failed",
      "Prices paused",
      "Prices running",
    ]);
    const byName = new Map(all.plans.map((plan) => [plan.name, plan]));
    expect(byName.get("Prices paused")).toMatchObject({ stepOrder: 2, tool: "extract_data" });
    expect(byName.get("Agent failed")).toMatchObject({
      stepOrder: 2,
      tool: null,
      reason: "The sources disagree.",
    });
    expect(byName.get("Branch failed")).toMatchObject({
      status: "failed",
      stepOrder: 1,
      reason: "Too unsure to go on.",
    });
    const tool = await listFailedPlans(as.admin, { filter: { tool: "extract_data" } });
    expect(names(tool)).toEqual(["Prices paused", "Prices running"]);
    const agent = await listFailedPlans(as.admin, { filter: { tool: "agent" } });
    expect(names(agent)).toEqual(["Agent failed", "Branch failed"]);
    const text = await listFailedPlans(as.admin, { filter: { text: "too UNSURE" } });
    expect(names(text)).toEqual(["Branch failed"]);
    const today = new Date().toISOString().slice(0, 10);
    expect(
      (await listFailedPlans(as.admin, { filter: { since: today, until: today } })).matching,
    ).toBe(4);
    expect((await listFailedPlans(as.admin, { filter: { since: "2999-01-01" } })).matching).toBe(0);
    await expect(listFailedPlans(as.admin, { filter: { tool: "web_fetch" } })).rejects.toThrow(
      /tool: must be agent .* or one of search_sources, extract_data, store_research/,
    );
    await expect(
      listFailedPlans(as.admin, { filter: { since: "2026-02-01", until: "2026-01-01" } }),
    ).rejects.toThrow(/until must not be before since/);
    // Beta sees its own only.
    expect(names(await listFailedPlans(as.betaAdmin, { filter: {} }))).toEqual(["Beta failed"]);
  });

  it("forks each from its failed step through fork_plan, reports a refusal, and forks nothing twice", async () => {
    const db = tenant.handle.db;
    const byTool = await forkFailedPlans(as.admin, { tool: "extract_data" });
    expect(byTool.forked).toEqual([
      expect.objectContaining({ planId: plans["Prices paused"], fromStepOrder: 2 }),
    ]);
    expect(byTool.refused).toEqual([
      {
        planId: plans["Prices running"],
        name: "Prices running",
        stepOrder: 2,
        reason: expect.stringMatching(
          /Step 1 of plan .* is in_progress; a fork carries only steps/,
        ),
      },
    ]);
    const fork = await tenant.agent.ok("get_research_context", {
      planId: byTool.forked[0]?.forkPlanId,
    });
    expect(fork.steps.map((s: { status: string }) => s.status)).toEqual(["completed", "pending"]);
    expect(fork.plan.forkedFrom.planId).toBe(plans["Prices paused"]);

    // The same action twice at once (a double submit): each plan is forked once.
    const [one, two] = await Promise.all([
      forkFailedPlans(as.admin, { tool: "agent" }),
      forkFailedPlans(as.admin, { tool: "agent" }),
    ]);
    const forked = [...one.forked, ...two.forked];
    expect(forked.map((f) => f.name).sort()).toEqual(["Agent failed", "Branch failed"]);
    for (const refused of [...one.refused, ...two.refused]) {
      expect(refused.reason).toMatch(/was already forked from this step/);
    }
    for (const name of ["Agent failed", "Branch failed", "Prices paused"]) {
      const status = await tenant.agent.ok("get_plan_status", { planId: plans[name] });
      expect(status.forks, name).toHaveLength(1);
    }
    const branchFork = forked.find((f) => f.name === "Branch failed");
    const branch = await tenant.agent.ok("get_plan_status", { planId: branchFork?.forkPlanId });
    expect(branch.steps.map((s: { status: string }) => s.status)).toEqual(["pending", "pending"]);
    // Both trails record each fork.
    const sources = [plans["Prices paused"], plans["Agent failed"], plans["Branch failed"]];
    const forks = [...byTool.forked, ...forked].map((f) => f.forkPlanId);
    const rows = await db
      .select({ planId: planAuditLog.planId, payload: planAuditLog.payload })
      .from(planAuditLog)
      .where(
        and(
          eq(planAuditLog.eventType, "plan_modified"),
          inArray(planAuditLog.planId, [...sources, ...forks] as string[]),
        ),
      );
    expect(rows.filter((row) => row.payload.action === "fork_made")).toHaveLength(3);
    expect(rows.filter((row) => row.payload.action === "forked")).toHaveLength(3);

    // Forked plans match no more; the refused one still does.
    expect(names(await listFailedPlans(as.admin, { filter: {} }))).toEqual(["Prices running"]);
    expect((await forkFailedPlans(as.admin, { tool: "agent" })).forked).toEqual([]);
    // Beta's failed plan was not touched.
    const beta = await as.beta.ok("get_plan_status", { planId: plans["Beta failed"] });
    expect(beta.forks).toEqual([]);
  });

  it("stops an action at its byte budget, and the same action again forks the next plans", async () => {
    // Three failed plans of about 60% of the budget each: one action copies
    // one of them whole. A plan's definitions hold at most 1 MB now, so these
    // are plans stored before that limit, their inputs grown in the database.
    const stepBytes = 20_000 + 60_000;
    const steps = Math.ceil((FORK_FAILED_BYTES * 0.6) / stepBytes);
    const large = Array.from({ length: steps }, (_, i) => ({
      stepType: i === 0 ? "search" : "analyze",
      instructions: `Step ${i + 1}: ${"x".repeat(20_000 - 20)}`,
    }));
    const names = ["Large one", "Large two", "Large three"];
    for (const name of names) {
      const { planId } = await create(tenant.agent, name, large.slice(0, 2));
      await tenant.handle.db.execute(sql`
        insert into plan_step (tenant_id, plan_id, step_order, step_type, instructions, inputs)
        select tenant_id, plan_id, step_order + n, 'analyze', instructions,
          jsonb_build_object('note', repeat('y', 60000))
        from plan_step, generate_series(1, ${steps - 2}) as n
        where plan_id = ${planId}::uuid and step_order = 2`);
      await tenant.agent.submit(
        planId,
        (await tenant.agent.ok("get_next_step", { planId })).step.stepId,
      );
      const second = await tenant.agent.ok("get_next_step", { planId });
      await tenant.agent.ok("modify_plan", {
        planId,
        action: "fail_step",
        stepId: second.step.stepId,
        reason: "Too large to go on.",
        modificationRationale: "Cannot go on.",
      });
    }
    const filter = { text: "Large" };
    expect((await listFailedPlans(as.admin, { filter })).matching).toBe(3);
    const forkedNames: string[] = [];
    for (const remaining of [2, 1]) {
      const action = await forkFailedPlans(as.admin, filter);
      expect(action.forked).toHaveLength(1);
      expect(action.refused).toEqual([]);
      expect(action.more).toBe(true);
      forkedNames.push(...action.forked.map((fork) => fork.name));
      expect((await listFailedPlans(as.admin, { filter })).matching).toBe(remaining);
    }
    const last = await forkFailedPlans(as.admin, filter);
    expect(last.forked).toHaveLength(1);
    expect(last.more).toBe(false);
    forkedNames.push(...last.forked.map((fork) => fork.name));
    expect(forkedNames.sort()).toEqual([...names].sort());
    expect((await listFailedPlans(as.admin, { filter })).matching).toBe(0);
  });
});
