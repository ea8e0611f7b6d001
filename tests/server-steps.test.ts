/**
 * Server-run steps over /api/mcp with the official SDK client, on PGlite and
 * PostgreSQL 15: Cairn runs the steps it can itself inside get_next_step, binds
 * results into later steps, and pauses with a reason whose suggested call,
 * made as given plus what was missing, unblocks the plan.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planAuditLog } from "@/lib/db/schema";
import { MAX_BINDINGS_PER_STEP, MAX_RESOLVED_BYTES } from "@/lib/plan-engine/bindings";
import { type AppServer, startAppServer } from "./support/app-server";
import { storedAuditProblems } from "./support/audit-replay";
import { BACKENDS } from "./support/databases";
import { type Agent, connectAgent, connectModernAgent, report } from "./support/mcp-client";

const store = (title: string, extra: Record<string, unknown> = {}) => ({
  stepType: "custom",
  instructions: `Keep ${title}.`,
  tool: "store_research",
  arguments: {
    artifactType: "finding",
    title,
    content: { title },
    contentText: `${title}: heat pumps work in cold climates.`,
    confidence: 0.8,
    ...extra,
  },
});

describe.each(BACKENDS)("server-run steps on %s", (backend) => {
  let app: AppServer;
  let agent: Agent;

  beforeAll(async () => {
    app = await startAppServer(backend);
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  function submit(planId: string, stepId: string, result: Record<string, unknown>) {
    return agent.call("submit_step_result", {
      planId,
      stepId,
      result,
      stepExecutionReport: report,
    });
  }

  it("completes a plan of server steps alone, binding one result into the next", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Server only",
      researchQuestion: "Do heat pumps work in cold climates?",
      steps: [
        store("Cold climate heat pumps"),
        {
          stepType: "search",
          instructions: "Find what we have.",
          tool: "search_sources",
          arguments: { query: "{{plan.researchQuestion}}", limit: 5 },
        },
        store("Summary", {
          content: { found: "{{steps.2.result.results}}", first: "{{steps.1.result.artifactId}}" },
          contentText: "Top hit: {{steps.2.result.results.0.title}}",
        }),
      ],
    });
    const next = await agent.ok("get_next_step", { planId: plan.planId });
    expect(next.status).toBe("plan_complete");
    expect(next.serverSteps.map((s: { status: string }) => s.status)).toEqual([
      "completed",
      "completed",
      "completed",
    ]);
    const context = await agent.ok("get_research_context", { planId: plan.planId });
    const [first, search, summary] = context.steps;
    expect(search.result.results[0].title).toBe("Cold climate heat pumps");
    const stored = context.artifacts.find((a: { title: string }) => a.title === "Summary");
    expect(stored?.content.first).toBe(first.result.artifactId);
    expect(stored?.content.found).toEqual(search.result.results);
    expect(stored?.contentText).toBe("Top hit: Cold climate heat pumps");
    expect(summary.tool).toBe("store_research");
  });

  it("runs the server steps in line, then hands out the agent step with its inputs resolved", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Mixed",
      researchQuestion: "Heat pump costs",
      steps: [
        store("Heat pump costs 2024"),
        {
          stepType: "search",
          instructions: "Prior research.",
          tool: "search_sources",
          arguments: { query: "heat pump costs" },
        },
        store("Costs noted"),
        {
          stepType: "analyze",
          instructions: "Analyse the prior research.",
          inputs: { prior: "{{steps.2.result.results}}", question: "{{plan.researchQuestion}}" },
          outputSchema: {
            type: "object",
            properties: { verdict: { type: "string" } },
            required: ["verdict"],
          },
        },
      ],
    });
    const next = await agent.ok("get_next_step", { planId: plan.planId });
    expect(next.status).toBe("ready");
    expect(next.serverSteps).toHaveLength(3);
    expect(next.step.stepOrder).toBe(4);
    expect(next.step.inputs.question).toBe("Heat pump costs");
    expect(next.step.inputs.prior[0].title).toMatch(/Heat pump costs/);
    // The agent step's outputSchema is checked on submit; nothing is stored when it fails.
    const wrong = await submit(plan.planId, next.step.stepId, { verdict: 3 });
    expect(wrong.text).toMatch(
      /^VALIDATION_ERROR: result does not satisfy the step's outputSchema/,
    );
    const right = await submit(plan.planId, next.step.stepId, { verdict: "worth it" });
    expect(right.data.planStatus).toBe("completed");
  });

  // security.md, "2026-11-29": 50 bindings of a 128 KB result once answered 6.5 MB.
  it.each([
    ["2025-11-25", connectAgent],
    ["2026-07-28", connectModernAgent],
  ] as const)(
    "hands out inputs whose bindings would resolve past the limit as written, each named, through a %s client",
    async (_era, connect) => {
      const client = await connect(app.mcpUrl, app.tenantA.key);
      try {
        const inputs = Object.fromEntries(
          Array.from({ length: MAX_BINDINGS_PER_STEP }, (_, k) => [`k${k}`, "{{steps.1.result}}"]),
        );
        const plan = await client.ok("create_research_plan", {
          name: "Large bound inputs",
          researchQuestion: "q",
          steps: [
            { stepType: "analyze", instructions: "Write a long result." },
            { stepType: "analyze", instructions: "Read it.", inputs },
          ],
        });
        const first = await client.ok("get_next_step", { planId: plan.planId });
        await client.ok("submit_step_result", {
          planId: plan.planId,
          stepId: first.step.stepId,
          result: { a: "x".repeat(130_000) },
          stepExecutionReport: report,
        });
        const next = await client.ok("get_next_step", { planId: plan.planId });
        expect(next.step.stepOrder).toBe(2);
        expect(next.step.inputs).toEqual(inputs);
        expect(next.step.unresolvedInputs).toEqual(
          Array(MAX_BINDINGS_PER_STEP).fill("{{steps.1.result}}"),
        );
        expect(JSON.stringify(next).length).toBeLessThan(MAX_RESOLVED_BYTES);
      } finally {
        await client.close();
      }
    },
  );

  it("pauses on a binding the result lacks; the suggested call with what was missing unblocks it", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Unresolvable",
      researchQuestion: "q",
      steps: [
        { stepType: "search", instructions: "Find a query." },
        {
          stepType: "search",
          instructions: "Search it.",
          tool: "search_sources",
          arguments: { query: "{{steps.1.result.query}}", limit: 3 },
        },
      ],
    });
    const one = await agent.ok("get_next_step", { planId: plan.planId });
    await submit(plan.planId, one.step.stepId, { notTheQuery: true });
    const paused = await agent.ok("get_next_step", { planId: plan.planId });
    expect(paused).toMatchObject({
      status: "paused",
      pauseReason: {
        type: "unresolvable_params",
        stepOrder: 2,
        missing: ["{{steps.1.result.query}}"],
        suggestedTool: {
          name: "search_sources",
          arguments: { limit: 3, completesStep: { planId: plan.planId } },
        },
      },
    });
    expect((await agent.ok("get_plan_status", { planId: plan.planId })).pauseReason.type).toBe(
      "unresolvable_params",
    );
    const call = paused.pauseReason.suggestedTool;
    const done = await agent.ok(call.name, { ...call.arguments, query: "heat pumps" });
    expect(done.completedStep).toMatchObject({ stepOrder: 2, planStatus: "completed" });
    expect((await agent.ok("get_next_step", { planId: plan.planId })).status).toBe("plan_complete");
    expect((await agent.ok("get_plan_status", { planId: plan.planId })).pauseReason).toBeNull();
  });

  it("pauses when bound arguments do not fit the tool; the corrected call unblocks it", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Mismatch",
      researchQuestion: "q",
      steps: [
        { stepType: "search", instructions: "Pick a limit." },
        {
          stepType: "search",
          instructions: "Search.",
          tool: "search_sources",
          arguments: { query: "heat", limit: "{{steps.1.result.limit}}" },
        },
      ],
    });
    const one = await agent.ok("get_next_step", { planId: plan.planId });
    await submit(plan.planId, one.step.stepId, { limit: "ten" });
    const paused = await agent.ok("get_next_step", { planId: plan.planId });
    expect(paused.pauseReason).toMatchObject({
      type: "schema_mismatch",
      issues: [expect.objectContaining({ path: "limit" })],
      suggestedTool: { name: "search_sources", arguments: { query: "heat", limit: "ten" } },
    });
    const call = paused.pauseReason.suggestedTool;
    await agent.ok(call.name, { ...call.arguments, limit: 10 });
    expect((await agent.ok("get_next_step", { planId: plan.planId })).status).toBe("plan_complete");
  });

  it("pauses on a tool error with the step failed; submitting the step's result unblocks it", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Tool error",
      researchQuestion: "q",
      steps: [
        {
          stepType: "extract",
          instructions: "Extract prices.",
          tool: "extract_data",
          arguments: {
            schema: { type: "object", properties: { price: { type: "number" } } },
            text: "A heat pump costs 9000 euros.",
          },
        },
        {
          stepType: "synthesize",
          instructions: "Write it up.",
          inputs: { price: "{{steps.1.result.price}}" },
        },
      ],
    });
    const paused = await agent.ok("get_next_step", { planId: plan.planId });
    expect(paused.pauseReason).toMatchObject({
      type: "tool_error",
      errorCode: "LLM_NOT_CONFIGURED",
      retryable: false,
      suggestedTool: { name: "submit_step_result" },
    });
    const context = await agent.ok("get_research_context", { planId: plan.planId });
    expect(context.steps[0]).toMatchObject({
      status: "failed",
      result: { error: { code: "LLM_NOT_CONFIGURED" } },
    });
    // Still paused: the later agent step is not handed out past the failure.
    expect((await agent.ok("get_next_step", { planId: plan.planId })).status).toBe("paused");
    const call = paused.pauseReason.suggestedTool;
    await agent.ok(call.name, { ...call.arguments, result: { price: 9000 } });
    const next = await agent.ok("get_next_step", { planId: plan.planId });
    expect(next.step).toMatchObject({ stepOrder: 2, inputs: { price: 9000 } });
  });

  it("pauses on a dependency that failed or was skipped; the linked call unblocks it", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Dependency",
      researchQuestion: "q",
      steps: [
        { stepType: "search", instructions: "Optional search." },
        {
          stepType: "search",
          instructions: "Search on.",
          tool: "search_sources",
          arguments: { query: "{{steps.1.result.query}}" },
        },
      ],
    });
    await agent.ok("modify_plan", {
      planId: plan.planId,
      action: "fail_step",
      stepId: plan.steps[0].stepId,
      reason: "No source reachable.",
      modificationRationale: "Give up on step 1.",
    });
    const paused = await agent.ok("get_next_step", { planId: plan.planId });
    expect(paused.pauseReason).toMatchObject({
      type: "unresolved_dependency",
      producingStepOrder: 1,
      missing: ["{{steps.1.result.query}}"],
    });
    const call = paused.pauseReason.suggestedTool;
    await agent.ok(call.name, { ...call.arguments, query: "heat pumps" });
    expect((await agent.ok("get_next_step", { planId: plan.planId })).status).toBe("plan_complete");
  });

  it("refuses bad definitions at creation with the step and field named", async () => {
    const base = { name: "Bad", researchQuestion: "q" };
    expect(
      await agent.fails("create_research_plan", {
        ...base,
        steps: [
          {
            stepType: "search",
            instructions: "a",
            tool: "search_sources",
            arguments: { query: "{{steps.2.result.x}}" },
          },
          { stepType: "search", instructions: "b" },
        ],
      }),
    ).toMatch(/^INVALID_STEP_REFERENCE: steps\[0\]\.arguments: .*not earlier/);
    expect(
      await agent.fails("create_research_plan", {
        ...base,
        steps: [{ stepType: "search", instructions: "a", tool: "web_fetch", arguments: {} }],
      }),
    ).toMatch(/^VALIDATION_ERROR: steps\[0\]\.tool: "web_fetch" is not a tool Cairn runs itself/);
    expect(
      await agent.fails("create_research_plan", {
        ...base,
        steps: [
          {
            stepType: "search",
            instructions: "a",
            tool: "search_sources",
            arguments: { limit: 5 },
          },
        ],
      }),
    ).toMatch(/^VALIDATION_ERROR: steps\[0\]\.arguments\.query: /);
    // A whole binding may stand where the schema wants another type.
    await agent.ok("create_research_plan", {
      ...base,
      steps: [
        { stepType: "search", instructions: "a" },
        {
          stepType: "search",
          instructions: "b",
          tool: "search_sources",
          arguments: { query: "x", limit: "{{steps.1.result.n}}" },
        },
      ],
    });
  });

  it("two agents pulling at once never run a server step twice", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Race",
      researchQuestion: "q",
      steps: [store("Race 1"), store("Race 2"), { stepType: "analyze", instructions: "Look." }],
    });
    const other = await connectAgent(app.mcpUrl, app.tenantA.key);
    try {
      const answers = await Promise.all([
        agent.ok("get_next_step", { planId: plan.planId }),
        other.ok("get_next_step", { planId: plan.planId }),
      ]);
      const ran = answers.flatMap((a) => a.serverSteps ?? []);
      expect(ran.map((s: { stepOrder: number }) => s.stepOrder).sort()).toEqual([1, 2]);
      expect(answers.filter((a) => a.status === "ready")).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it("writes audit rows that replay to every plan's steps, with the tools in them", async () => {
    await app.stopServer();
    const handle = await app.openDatabase();
    try {
      expect(await storedAuditProblems(handle.db)).toEqual({});
      const serverRows = await handle.db
        .select({ payload: planAuditLog.payload, actorLabel: planAuditLog.actorLabel })
        .from(planAuditLog)
        .where(eq(planAuditLog.actorType, "system"));
      expect(serverRows.length).toBeGreaterThan(0);
      expect(serverRows.every((r) => typeof r.payload.tool === "string")).toBe(true);
      expect(serverRows[0]?.actorLabel).toMatch(/^Cairn/);
    } finally {
      await handle.close();
    }
  });
});
