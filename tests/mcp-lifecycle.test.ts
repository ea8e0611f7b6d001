/**
 * The research-plan lifecycle through /api/mcp of the production build, driven
 * by the official SDK client over HTTP, on PGlite and on PostgreSQL 15.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { type Agent, connectAgent, report } from "./support/mcp-client";

const STALL_SECONDS = 4;

describe.each(BACKENDS)("the plan lifecycle over MCP on %s", (backend) => {
  let app: AppServer;
  let agent: Agent;

  beforeAll(async () => {
    app = await startAppServer(backend, { stallThresholdSeconds: STALL_SECONDS });
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  const steps = (...types: string[]) =>
    types.map((stepType, i) => ({
      stepType,
      instructions: `Step ${i + 1}: do the ${stepType} work.`,
    }));

  async function submit(planId: string, stepId: string, extra: Record<string, unknown> = {}) {
    return agent.ok("submit_step_result", {
      planId,
      stepId,
      result: { ok: true },
      resultSummary: "Done.",
      confidence: 0.5,
      stepExecutionReport: report,
      ...extra,
    });
  }

  it("lists every tool with a title, an LLM-facing description, schemas and annotations", async () => {
    const { tools } = await agent.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "create_research_plan",
        "extract_data",
        "get_next_step",
        "get_plan_status",
        "get_research_context",
        "get_step_context",
        "list_active_plans",
        "log_skill_execution",
        "modify_plan",
        "ping",
        "request_user_review",
        "search_sources",
        "store_research",
        "store_research_output",
        "submit_research_feedback",
        "submit_step_result",
        "submit_user_decision",
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description?.length, tool.name).toBeGreaterThan(80);
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.annotations, tool.name).toHaveProperty("readOnlyHint");
    }
    const create = tools.find((t) => t.name === "create_research_plan");
    expect(JSON.stringify(create?.inputSchema)).toContain("checkpoint");
    expect(await agent.ok("ping")).toMatchObject({ ok: true });
  });

  it("runs a five-step plan with a checkpoint from creation to completion", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "[Scan] Heat pumps",
      researchQuestion: "Are heat pumps worth it in cold climates?",
      steps: steps("search", "analyze", "checkpoint", "synthesize", "critique"),
      planDesignRationale: "A scan with one checkpoint.",
      outputFormattingNotes: "Short report.",
      sessionId: "session-1",
    });
    expect(created.status).toBe("planning");
    expect(created.steps).toHaveLength(5);
    expect(created.firstStep).toMatchObject({ stepOrder: 1, stepType: "search" });
    const planId: string = created.planId;

    for (let order = 1; order <= 5; order++) {
      const next = await agent.ok("get_next_step", { planId });
      expect(next.status).toBe("ready");
      expect(next.step.stepOrder).toBe(order);
      if (next.step.stepType === "checkpoint") {
        const review = await agent.ok("request_user_review", {
          planId,
          stepId: next.step.stepId,
          summary: "Here is what I found so far.",
          questions: ["Go deeper on costs?"],
        });
        expect(review).toMatchObject({
          stepStatus: "awaiting_input",
          planStatus: "awaiting_review",
        });
        expect((await agent.ok("get_next_step", { planId })).status).toBe("awaiting_review");
        const decided = await agent.ok("submit_user_decision", {
          planId,
          decision: "approve",
          reviewRequestId: review.reviewRequestId,
        });
        expect(decided).toMatchObject({ stepStatus: "completed", planStatus: "executing" });
        continue;
      }
      const context =
        order > 1 ? await agent.ok("get_step_context", { planId, stepId: next.step.stepId }) : null;
      if (context) expect(context.priorSteps).toHaveLength(order - 1);
      const submitted = await submit(planId, next.step.stepId, {
        outputFormattingNotes: order === 4 ? "Lead with the verdict." : undefined,
      });
      expect(submitted.planStatus).toBe(order === 5 ? "completed" : "executing");
    }

    const done = await agent.ok("get_next_step", { planId });
    expect(done).toMatchObject({
      status: "plan_complete",
      planFormattingNotes: "Short report.",
      stepFormattingNotes: [
        expect.objectContaining({ stepOrder: 4, notes: "Lead with the verdict." }),
      ],
    });
    const status = await agent.ok("get_plan_status", { planId });
    expect(status.status).toBe("completed");
    expect(status.progress).toMatchObject({ percent: 100, total: 5, completed: 5 });
    expect(
      await agent.fails("submit_step_result", {
        planId,
        stepId: created.steps[0].stepId,
        result: {},
        stepExecutionReport: report,
      }),
    ).toMatch(/^CONFLICT: Step 1 is already completed/);
  });

  it("branching: skip_to skips the pending steps up to its target", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "Skip",
      researchQuestion: "q",
      steps: steps("search", "extract", "analyze", "synthesize"),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "confidence > 0.8",
          ifTrueAction: "skip_to",
          actionParams: { targetStepOrder: 4 },
        },
      ],
    });
    const planId = created.planId;
    const first = await agent.ok("get_next_step", { planId });
    const submitted = await submit(planId, first.step.stepId, { confidence: 0.9 });
    expect(submitted.firedConditions).toEqual([
      expect.objectContaining({
        action: "skip_to",
        skippedStepIds: [created.steps[1].stepId, created.steps[2].stepId],
      }),
    ]);
    const next = await agent.ok("get_next_step", { planId });
    expect(next.step.stepOrder).toBe(4);
    expect((await submit(planId, next.step.stepId)).planStatus).toBe("completed");
    const context = await agent.ok("get_research_context", { planId });
    expect(context.steps.map((s: { status: string }) => s.status)).toEqual([
      "completed",
      "skipped",
      "skipped",
      "completed",
    ]);
    expect(context.branchingConditions[0]).toMatchObject({ afterStepOrder: 1, fired: true });
  });

  it("branching: a condition that does not hold changes nothing", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "No skip",
      researchQuestion: "q",
      steps: steps("search", "analyze"),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.hasData === false",
          ifTrueAction: "fail",
        },
      ],
    });
    const first = await agent.ok("get_next_step", { planId: created.planId });
    const submitted = await submit(created.planId, first.step.stepId, {
      result: { hasData: true },
    });
    expect(submitted).toMatchObject({
      conditionsEvaluated: 1,
      firedConditions: [],
      planStatus: "executing",
    });
  });

  it("branching: fail fails the plan and add_steps asks for steps", async () => {
    const failing = await agent.ok("create_research_plan", {
      name: "Fail",
      researchQuestion: "q",
      steps: steps("search", "analyze"),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.sourceCount < 3",
          ifTrueAction: "fail",
          actionParams: { reason: "too few sources" },
        },
        { afterStepOrder: 1, conditionExpression: "confidence >= 0", ifTrueAction: "add_steps" },
      ],
    });
    const step = await agent.ok("get_next_step", { planId: failing.planId });
    const failed = await submit(failing.planId, step.step.stepId, { result: { sourceCount: 1 } });
    expect(failed.planStatus).toBe("failed");
    expect(failed.firedConditions).toEqual([expect.objectContaining({ action: "fail" })]);
    expect((await agent.ok("get_next_step", { planId: failing.planId })).status).toBe(
      "plan_failed",
    );

    const growing = await agent.ok("create_research_plan", {
      name: "Grow",
      researchQuestion: "q",
      steps: steps("search", "critique"),
      branchingConditions: [
        {
          afterStepOrder: 2,
          conditionExpression: "result.gaps > 0",
          ifTrueAction: "add_steps",
          actionParams: { focus: "fill the gaps" },
        },
      ],
    });
    const a = await agent.ok("get_next_step", { planId: growing.planId });
    await submit(growing.planId, a.step.stepId);
    const b = await agent.ok("get_next_step", { planId: growing.planId });
    const grown = await submit(growing.planId, b.step.stepId, { result: { gaps: 2 } });
    expect(grown.firedConditions).toEqual([
      expect.objectContaining({ action: "add_steps", addStepsParams: { focus: "fill the gaps" } }),
    ]);
    expect(grown.hint).toMatch(/modify_plan/);
  });

  it("rejects bad references and unparseable conditions at creation, writing nothing", async () => {
    const before = (await agent.ok("list_active_plans", { limit: 100 })).plans.length;
    expect(
      await agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: steps("search"),
        branchingConditions: [
          { afterStepOrder: 2, conditionExpression: "confidence > 1", ifTrueAction: "fail" },
        ],
      }),
    ).toMatch(/^INVALID_STEP_REFERENCE: branchingConditions\[0\]\.afterStepOrder is 2/);
    expect(
      await agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: steps("search", "analyze"),
        branchingConditions: [
          {
            afterStepOrder: 1,
            conditionExpression: "skip_to",
            ifTrueAction: "skip_to",
            actionParams: { targetStepOrder: 9 },
          },
        ],
      }),
    ).toMatch(/^INVALID_CONDITION: .*no comparison operator/);
    expect(
      await agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: steps("search", "analyze"),
        branchingConditions: [
          {
            afterStepOrder: 1,
            conditionExpression: "confidence > 0.5",
            ifTrueAction: "skip_to",
            actionParams: { targetStepOrder: 9 },
          },
        ],
      }),
    ).toMatch(/^INVALID_STEP_REFERENCE: .*targetStepOrder is 9/);
    expect((await agent.ok("list_active_plans", { limit: 100 })).plans.length).toBe(before);
  });

  async function planAtReview(stepTypes = ["checkpoint", "synthesize"]) {
    const created = await agent.ok("create_research_plan", {
      name: "Review",
      researchQuestion: "q",
      steps: steps(...stepTypes),
    });
    const planId: string = created.planId;
    const next = await agent.ok("get_next_step", { planId });
    const review = await agent.ok("request_user_review", {
      planId,
      stepId: next.step.stepId,
      summary: "Please check.",
    });
    return {
      planId,
      stepId: next.step.stepId as string,
      reviewRequestId: review.reviewRequestId as string,
      created,
    };
  }

  it("review decisions: modify appends feedback and returns the step to the agent", async () => {
    const { planId, stepId } = await planAtReview();
    expect(await agent.fails("submit_user_decision", { planId, decision: "modify" })).toMatch(
      /^VALIDATION_ERROR: .*feedback/,
    );
    const modified = await agent.ok("submit_user_decision", {
      planId,
      decision: "modify",
      feedback: "Include 2024 prices.",
    });
    expect(modified).toMatchObject({ stepStatus: "in_progress", planStatus: "executing" });
    expect(modified.instructions).toMatch(/\n\n---\n\nUser feedback: Include 2024 prices\.$/);
    const context = await agent.ok("get_research_context", { planId, sessionId: "s2" });
    const step = context.steps.find((s: { stepId: string }) => s.stepId === stepId);
    expect(step?.status).toBe("in_progress");
    expect(step?.instructions).toContain("User feedback: Include 2024 prices.");
    expect(context.reviews[0].decision).toMatchObject({
      decision: "modify",
      feedback: "Include 2024 prices.",
    });
    // The agent asks again; this time the person approves.
    const again = await agent.ok("request_user_review", { planId, stepId, summary: "Redone." });
    await agent.ok("submit_user_decision", {
      planId,
      decision: "approve",
      reviewRequestId: again.reviewRequestId,
    });
    expect((await agent.ok("get_next_step", { planId })).step.stepOrder).toBe(2);
  });

  it("review decisions: reject fails the step and the plan; skip skips the step", async () => {
    const rejected = await planAtReview();
    const answer = await agent.ok("submit_user_decision", {
      planId: rejected.planId,
      decision: "reject",
      feedback: "Wrong question.",
    });
    expect(answer).toMatchObject({ stepStatus: "failed", planStatus: "failed" });

    const skipped = await planAtReview(["checkpoint"]);
    const skip = await agent.ok("submit_user_decision", {
      planId: skipped.planId,
      decision: "skip",
    });
    expect(skip).toMatchObject({ stepStatus: "skipped", planStatus: "completed" });
  });

  it("review decisions: of two racing decisions one wins and the other gets CONFLICT", async () => {
    const { planId, reviewRequestId } = await planAtReview();
    const other = await connectAgent(app.mcpUrl, app.tenantA.key);
    try {
      const answers = await Promise.all([
        agent.call("submit_user_decision", { planId, decision: "approve", reviewRequestId }),
        other.call("submit_user_decision", { planId, decision: "reject", reviewRequestId }),
      ]);
      expect(answers.filter((a) => !a.isError)).toHaveLength(1);
      const loser = answers.find((a) => a.isError);
      expect(loser?.text).toMatch(/^CONFLICT: The plan is no longer waiting for a decision/);
      const context = await agent.ok("get_research_context", { planId });
      expect(context.reviews).toHaveLength(1);
      expect(context.reviews[0].status).toBe("decided");
    } finally {
      await other.close();
    }
  });

  it("modify_plan: add, remove, reorder, update, fail and retry steps", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "Modify",
      researchQuestion: "q",
      steps: steps("search", "analyze", "synthesize"),
    });
    const planId = created.planId;
    const ids = created.steps.map((s: { stepId: string }) => s.stepId);
    const why = { modificationRationale: "Because the test says so." };

    const added = await agent.ok("modify_plan", {
      planId,
      action: "add_steps",
      insertAfterOrder: 1,
      steps: [{ stepType: "extract", instructions: "Extract the numbers." }],
      ...why,
    });
    expect(added.steps.map((s: { stepType: string }) => s.stepType)).toEqual([
      "search",
      "extract",
      "analyze",
      "synthesize",
    ]);
    expect(added.planStatus).toBe("planning");
    const appended = await agent.ok("modify_plan", {
      planId,
      action: "add_steps",
      steps: [{ stepType: "critique", instructions: "Critique." }],
      ...why,
    });
    expect(appended.steps.at(-1)).toMatchObject({ stepOrder: 5, stepType: "critique" });

    const removed = await agent.ok("modify_plan", {
      planId,
      action: "remove_step",
      stepId: ids[1],
      ...why,
    });
    expect(removed.steps.map((s: { stepOrder: number }) => s.stepOrder)).toEqual([1, 2, 3, 4]);
    expect(removed.steps.some((s: { stepId: string }) => s.stepId === ids[1])).toBe(false);

    const order = [...removed.steps.map((s: { stepId: string }) => s.stepId)].reverse();
    const reordered = await agent.ok("modify_plan", {
      planId,
      action: "reorder_steps",
      stepIds: order,
      ...why,
    });
    expect(reordered.steps.map((s: { stepId: string }) => s.stepId)).toEqual(order);
    // The new order is stored (the ids travel to the database as one bound parameter).
    const stored = await agent.ok("get_plan_status", { planId });
    expect(
      stored.steps.map((s: { stepId: string; stepOrder: number }) => [s.stepOrder, s.stepId]),
    ).toEqual(order.map((id: string, index: number) => [index + 1, id]));
    expect(
      await agent.fails("modify_plan", {
        planId,
        action: "reorder_steps",
        stepIds: order.slice(1),
        ...why,
      }),
    ).toMatch(/^VALIDATION_ERROR: stepIds must list every step/);

    await agent.ok("modify_plan", {
      planId,
      action: "update_step_instructions",
      stepId: order[0],
      instructions: "New instructions.",
      ...why,
    });
    const next = await agent.ok("get_next_step", { planId });
    expect(next.step).toMatchObject({ stepId: order[0], instructions: "New instructions." });

    const failed = await agent.ok("modify_plan", {
      planId,
      action: "fail_step",
      stepId: next.step.stepId,
      reason: "Source down.",
      ...why,
    });
    expect(failed.steps[0].status).toBe("failed");
    expect(failed.planStatus).toBe("executing");
    expect(
      await agent.fails("modify_plan", {
        planId,
        action: "remove_step",
        stepId: next.step.stepId,
        ...why,
      }),
    ).toMatch(/^INVALID_TRANSITION: .*only a pending step can be removed/);
    const retried = await agent.ok("modify_plan", {
      planId,
      action: "retry_step",
      stepId: next.step.stepId,
      ...why,
    });
    expect(retried.steps[0].status).toBe("pending");
    expect((await agent.ok("get_next_step", { planId })).step.stepId).toBe(next.step.stepId);
    expect(
      await agent.fails("modify_plan", {
        planId,
        action: "retry_step",
        stepId: next.step.stepId,
        ...why,
      }),
    ).toMatch(/^INVALID_TRANSITION: .*only a failed step can be retried/);

    const paused = await agent.ok("request_user_review", {
      planId,
      stepId: next.step.stepId,
      summary: "s",
    });
    expect(paused.planStatus).toBe("awaiting_review");
    expect(
      await agent.fails("modify_plan", {
        planId,
        action: "add_steps",
        steps: steps("custom"),
        ...why,
      }),
    ).toMatch(/^PLAN_NOT_MODIFIABLE: .*awaiting_review/);
  });

  it("accepts a result for a step still pending (the timing edge case)", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "Edge",
      researchQuestion: "q",
      steps: steps("search", "analyze"),
    });
    const submitted = await submit(created.planId, created.steps[0].stepId);
    expect(submitted).toMatchObject({ stepStatus: "completed", planStatus: "executing" });
    expect((await agent.ok("get_next_step", { planId: created.planId })).step.stepOrder).toBe(2);
  });

  it("detects a stall after the threshold and resumes the plan from get_next_step", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "Stall",
      researchQuestion: "q",
      steps: steps("search", "analyze", "synthesize"),
    });
    const planId = created.planId;
    const first = await agent.ok("get_next_step", { planId });
    const fresh = await agent.ok("get_plan_status", { planId });
    expect(fresh).toMatchObject({ status: "executing", stallWarnings: [] });

    await new Promise((resolve) => setTimeout(resolve, (STALL_SECONDS + 1) * 1000));
    const stalled = await agent.ok("get_plan_status", { planId });
    expect(stalled.status).toBe("stalled");
    expect(stalled.stallThresholdSeconds).toBe(STALL_SECONDS);
    expect(stalled.stallWarnings).toEqual([
      expect.objectContaining({ stepId: first.step.stepId, stepOrder: 1 }),
    ]);
    expect(stalled.stallWarnings[0].inProgressSeconds).toBeGreaterThan(STALL_SECONDS);
    expect(stalled.progress).toMatchObject({ total: 3, inProgress: 1, pending: 2, percent: 0 });

    // A new session resumes: the stuck step's lease (the stall threshold by
    // default) has run out, so it is handed out again before the pending ones.
    const second = await connectAgent(app.mcpUrl, app.tenantA.key);
    try {
      const context = await second.ok("get_research_context", { planId, sessionId: "session-2" });
      expect(context.plan.status).toBe("stalled");
      const resumed = await second.ok("get_next_step", { planId });
      expect(resumed).toMatchObject({ status: "ready", planStatus: "executing" });
      expect(resumed.step).toMatchObject({ stepId: first.step.stepId, attempt: 2 });
      // The first holder comes back and answers first: its result is kept.
      await submit(planId, first.step.stepId);
      const late = await second.call("submit_step_result", {
        planId,
        stepId: resumed.step.stepId,
        result: { ok: "late" },
        stepExecutionReport: report,
      });
      expect(late.text).toMatch(/^CONFLICT: /);
      const two = await second.ok("get_next_step", { planId });
      expect(two.step.stepOrder).toBe(2);
      await submit(planId, two.step.stepId);
      const last = await second.ok("get_next_step", { planId });
      await submit(planId, last.step.stepId);
      expect((await second.ok("get_next_step", { planId })).status).toBe("plan_complete");
    } finally {
      await second.close();
    }
  });

  it("hands 25 concurrent pulls on one plan 25 different steps", async () => {
    const count = 25;
    const created = await agent.ok("create_research_plan", {
      name: "Crowd",
      researchQuestion: "q",
      steps: Array.from({ length: count }, (_, i) => ({
        stepType: "search",
        instructions: `part ${i + 1}`,
      })),
    });
    const agents = await Promise.all(
      Array.from({ length: count }, () => connectAgent(app.mcpUrl, app.tenantA.key)),
    );
    try {
      const answers = await Promise.all(
        agents.map((a) => a.ok("get_next_step", { planId: created.planId })),
      );
      const ids = answers.map((a) => a.step.stepId);
      expect(new Set(ids).size).toBe(count);
      expect((await agent.ok("get_next_step", { planId: created.planId })).status).toBe(
        "no_pending_steps",
      );
      await Promise.all(
        agents.map((a, i) =>
          a.ok("submit_step_result", {
            planId: created.planId,
            stepId: ids[i],
            result: { part: i },
            stepExecutionReport: report,
          }),
        ),
      );
      const status = await agent.ok("get_plan_status", { planId: created.planId });
      expect(status).toMatchObject({
        status: "completed",
        progress: { completed: count, percent: 100 },
      });
    } finally {
      await Promise.all(agents.map((a) => a.close()));
    }
  });

  it("keeps tenants apart: another tenant's plan is NOT_FOUND for every tool", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "Secret",
      researchQuestion: "Only Alpha may see this",
      steps: steps("search"),
    });
    const planId = created.planId;
    const stepId = created.steps[0].stepId;
    const beta = await connectAgent(app.mcpUrl, app.tenantB.key);
    try {
      const attempts: [string, Record<string, unknown>][] = [
        ["get_next_step", { planId }],
        ["submit_step_result", { planId, stepId, result: {}, stepExecutionReport: report }],
        ["get_step_context", { planId, stepId }],
        ["request_user_review", { planId, stepId, summary: "s" }],
        ["submit_user_decision", { planId, decision: "approve" }],
        ["modify_plan", { planId, action: "fail_step", stepId, modificationRationale: "r" }],
        ["get_plan_status", { planId }],
        ["get_research_context", { planId }],
      ];
      for (const [tool, args] of attempts) {
        expect(await beta.fails(tool, args), tool).toMatch(
          /^NOT_FOUND: No plan .* exists for this account/,
        );
      }
      const listed = await beta.ok("list_active_plans");
      expect(listed.plans.some((p: { planId: string }) => p.planId === planId)).toBe(false);
      const mine = await agent.ok("get_plan_status", { planId });
      expect(mine.status).toBe("planning");
    } finally {
      await beta.close();
    }
  });

  it("writes the audit trail in the same transactions and the tool-call log after", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "Audited",
      researchQuestion: "q",
      steps: steps("search", "checkpoint"),
    });
    const planId = created.planId;
    const first = await agent.ok("get_next_step", { planId });
    await submit(planId, first.step.stepId);
    const second = await agent.ok("get_next_step", { planId });
    const review = await agent.ok("request_user_review", {
      planId,
      stepId: second.step.stepId,
      summary: "s",
    });
    await agent.ok("submit_user_decision", {
      planId,
      decision: "approve",
      reviewRequestId: review.reviewRequestId,
    });
    await agent.ok("get_research_context", { planId, sessionId: "audit-session" });
    await agent.fails("get_next_step", { planId: "not-a-uuid" });
    await new Promise((resolve) => setTimeout(resolve, 300));

    await app.stopServer();
    const db = await app.openDatabase();
    try {
      const { planAuditLog, mcpToolCallLog } = await import("@/lib/db/schema");
      const { asc, eq } = await import("drizzle-orm");
      const rows = await db.db
        .select()
        .from(planAuditLog)
        .where(eq(planAuditLog.planId, planId))
        .orderBy(asc(planAuditLog.createdAt));
      expect(
        rows.map((r) => [r.eventType, (r.payload as { action?: string }).action ?? null]),
      ).toEqual([
        ["plan_modified", "created"],
        ["step_started", null],
        ["step_completed", null],
        ["step_started", null],
        ["user_reviewed", "review_requested"],
        ["user_reviewed", "decision"],
        ["session_resumed", null],
      ]);
      for (const row of rows) {
        expect(row).toMatchObject({
          tenantId: app.tenantA.tenantId,
          actorType: "api_key",
          actorId: app.tenantA.apiKeyId,
          actorLabel: 'key "Alpha agent" of alpha@example.com',
        });
      }
      const calls = await db.db
        .select()
        .from(mcpToolCallLog)
        .where(eq(mcpToolCallLog.tenantId, app.tenantA.tenantId));
      expect(calls.length).toBeGreaterThan(10);
      expect(calls.some((c) => c.toolName === "ping")).toBe(false);
      const bad = calls.find((c) => c.isError && c.toolName === "get_next_step");
      expect(bad).toMatchObject({ errorCode: "VALIDATION_ERROR", apiKeyId: app.tenantA.apiKeyId });
      expect(
        calls.every((c) => c.durationMs >= 0 && c.requestBytes > 0 && c.responseBytes > 0),
      ).toBe(true);
    } finally {
      await db.close();
    }
  });
});
