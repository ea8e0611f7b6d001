/**
 * The research-plan lifecycle through /api/mcp of the production build, driven
 * by the official SDK client over HTTP, on PGlite and on PostgreSQL 15: what
 * needs the wire (the tools as listed, a whole plan's answers as a client reads
 * them, pulls from many connections, errors as MCP results per tenant, the
 * tool-call log). The rules of each use case are tested in process, in
 * tests/use-cases/.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS } from "@/lib/mcp/tools";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { type Agent, connectAgent, plainResult, report } from "./support/mcp-client";

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

  const submit = (planId: string, stepId: string, extra: Record<string, unknown> = {}) =>
    agent.ok("submit_step_result", plainResult(planId, stepId, extra));

  it("lists every tool with a title, an LLM-facing description, schemas and annotations", async () => {
    const { tools } = await agent.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description?.length, tool.name).toBeGreaterThan(80);
      expect(tool.inputSchema.type).toBe("object");
      // A field the tool does not know is refused, and the schema says so.
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.annotations, tool.name).toHaveProperty("readOnlyHint");
    }
    const create = tools.find((t) => t.name === "create_research_plan");
    expect(JSON.stringify(create?.inputSchema)).toContain("checkpoint");
    expect(await agent.ok("ping")).toMatchObject({ ok: true });
    expect(await agent.fails("ping", { verbose: true })).toMatch(
      /^VALIDATION_ERROR: Unknown field verbose/,
    );
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
    // What the agent never gave (the checkpoint's report, every step's arguments,
    // inputs and schema) reads back as null, not as a shortened value.
    const context = await agent.ok("get_research_context", { planId });
    expect(context.steps[2]).toMatchObject({
      stepType: "checkpoint",
      stepExecutionReport: null,
      arguments: null,
      inputs: null,
      outputSchema: null,
      shortened: [],
    });
    expect(
      await agent.fails("submit_step_result", {
        planId,
        stepId: created.steps[0].stepId,
        result: {},
        stepExecutionReport: report,
      }),
    ).toMatch(/^CONFLICT: Step 1 is already completed/);
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
        ["submit_user_decision", { planId, reviewRequestId: randomUUID(), decision: "approve" }],
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
      // The text the agent got, for the admin's log, without the code in front.
      expect(bad?.errorMessage).toMatch(/^planId: /);
      expect(
        calls.every((c) => c.durationMs >= 0 && c.requestBytes > 0 && c.responseBytes > 0),
      ).toBe(true);
    } finally {
      await db.close();
    }
  });
});
