/**
 * get_research_context and get_step_context (docs/execution-flow.md): what an
 * agent reads to resume a plan or to work on a step, paged artifacts, the
 * lease renewal, and nothing of another tenant's. In process, on PGlite and on
 * PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, tenantContext, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("get_research_context and get_step_context on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  /** A plan with its first step completed and an artifact of it, the second in progress. */
  async function planUnderWay() {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Context",
      researchQuestion: "What changed?",
      steps: planSteps("search", "analyze", "synthesize"),
    });
    const planId: string = created.planId;
    const first = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.ok("store_research", {
      planId,
      stepId: first.step.stepId,
      artifactType: "finding",
      title: "The finding",
      content: { fact: 1 },
      contentText: "The one fact found.",
      confidence: 0.7,
      sourceUrls: ["https://example.com/a"],
    });
    await tenant.agent.submit(planId, first.step.stepId, { resultSummary: "Found one fact." });
    const second = await tenant.agent.ok("get_next_step", { planId });
    return { planId, created, first: first.step, second: second.step };
  }

  it("get_research_context returns the plan, its steps and artifacts", async () => {
    const { planId, first } = await planUnderWay();
    const context = await tenant.agent.ok("get_research_context", { planId, sessionId: "s-2" });
    expect(context.plan).toMatchObject({
      planId,
      name: "Context",
      researchQuestion: "What changed?",
      status: "executing",
      pauseReason: null,
      awaitingSteps: null,
    });
    expect(context.progress).toMatchObject({ total: 3, completed: 1, inProgress: 1, pending: 1 });
    expect(context.steps.map((s: { status: string }) => s.status)).toEqual([
      "completed",
      "in_progress",
      "pending",
    ]);
    expect(context.steps[0]).toMatchObject({
      stepId: first.stepId,
      resultSummary: "Found one fact.",
    });
    expect(context.artifacts).toEqual([
      expect.objectContaining({
        stepId: first.stepId,
        title: "The finding",
        content: { fact: 1 },
        contentText: "The one fact found.",
      }),
    ]);
    expect(context).toMatchObject({
      artifactsTotal: 1,
      artifactsNextOffset: null,
      reviews: [],
      deliverable: null,
      feedback: [],
    });
  });

  it("get_step_context returns the earlier steps and renews the step's lease", async () => {
    const { planId, first, second } = await planUnderWay();
    const context = await tenant.agent.ok("get_step_context", { planId, stepId: second.stepId });
    expect(context).toMatchObject({
      planId,
      researchQuestion: "What changed?",
      step: { stepId: second.stepId, stepOrder: 2, status: "in_progress" },
      artifactsTotal: 1,
      artifactsNextOffset: null,
    });
    expect(context.priorSteps.map((s: { stepId: string }) => s.stepId)).toEqual([first.stepId]);
    expect(context.artifacts[0]).toMatchObject({ title: "The finding" });
    expect(Date.parse(context.leaseExpiresAt ?? "")).toBeGreaterThanOrEqual(
      Date.parse(second.leaseExpiresAt),
    );
    // A step not in progress has no lease to renew.
    const done = await tenant.agent.ok("get_step_context", { planId, stepId: first.stepId });
    expect(done).toMatchObject({ leaseExpiresAt: null, priorSteps: [] });
  });

  it("pages the artifacts, oldest first", async () => {
    const { planId, first } = await planUnderWay();
    await tenant.agent.ok("store_research", {
      planId,
      stepId: first.stepId,
      artifactType: "finding",
      title: "The second finding",
      content: { fact: 2 },
      contentText: "A second fact.",
      confidence: 0.6,
      sourceUrls: [],
    });
    const page1 = await tenant.agent.ok("get_research_context", { planId, artifactsLimit: 1 });
    expect(page1.artifacts.map((a: { title: string }) => a.title)).toEqual(["The finding"]);
    expect(page1).toMatchObject({ artifactsTotal: 2, artifactsNextOffset: 1 });
    const page2 = await tenant.agent.ok("get_research_context", {
      planId,
      artifactsLimit: 1,
      artifactsOffset: 1,
    });
    expect(page2.artifacts.map((a: { title: string }) => a.title)).toEqual(["The second finding"]);
    expect(page2.artifactsNextOffset).toBeNull();
  });

  it("finds neither context for another tenant", async () => {
    const { planId, second } = await planUnderWay();
    const beta = inProcessAgent(await tenantContext(tenant.handle.db, "Beta"));
    expect(await beta.fails("get_research_context", { planId })).toMatch(/^NOT_FOUND: /);
    expect(await beta.fails("get_step_context", { planId, stepId: second.stepId })).toMatch(
      /^NOT_FOUND: /,
    );
  });
});
