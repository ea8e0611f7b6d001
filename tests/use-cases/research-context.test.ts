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
      artifactsNextCursor: null,
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
      artifactsNextCursor: null,
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

  it("pages the artifacts oldest first by cursor: each once, even one stored meanwhile", async () => {
    const { planId, first } = await planUnderWay();
    const store = (title: string) =>
      tenant.agent.ok("store_research", {
        planId,
        stepId: first.stepId,
        artifactType: "finding",
        title,
        content: { title },
        contentText: title,
        confidence: 0.6,
        sourceUrls: [],
      });
    await store("The second finding");
    const page1 = await tenant.agent.ok("get_research_context", { planId, artifactsLimit: 1 });
    expect(page1.artifacts.map((a: { title: string }) => a.title)).toEqual(["The finding"]);
    expect(page1).toMatchObject({ artifactsTotal: 2, artifactsNextCursor: expect.any(String) });
    // Stored after the first page: the newest, so it comes last, once.
    await store("The third finding");
    const seen = page1.artifacts.map((a: { title: string }) => a.title);
    let cursor = page1.artifactsNextCursor;
    while (cursor) {
      const page = await tenant.agent.ok("get_step_context", {
        planId,
        stepId: first.stepId,
        artifactsLimit: 1,
        artifactsCursor: cursor,
      });
      seen.push(...page.artifacts.map((a: { title: string }) => a.title));
      cursor = page.artifactsNextCursor;
    }
    expect(seen).toEqual(["The finding", "The second finding", "The third finding"]);
    // No cursor with a page of none: only the count.
    expect(
      await tenant.agent.ok("get_research_context", { planId, artifactsLimit: 0 }),
    ).toMatchObject({ artifacts: [], artifactsTotal: 3, artifactsNextCursor: null });
  });

  it("refuses a cursor it did not give: made up, or another list's", async () => {
    const { planId } = await planUnderWay();
    await tenant.agent.ok("create_research_plan", {
      name: "Another",
      researchQuestion: "q",
      steps: planSteps("search"),
    });
    const { nextCursor } = await tenant.agent.ok("list_active_plans", { limit: 1 });
    expect(nextCursor).toEqual(expect.any(String));
    for (const artifactsCursor of ["not-a-cursor", nextCursor ?? ""]) {
      expect(await tenant.agent.fails("get_research_context", { planId, artifactsCursor })).toMatch(
        /^VALIDATION_ERROR: artifactsCursor is not one this list gave: pass the previous answer's artifactsNextCursor/,
      );
    }
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
