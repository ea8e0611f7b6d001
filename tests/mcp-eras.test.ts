/**
 * Both protocol eras from the one /api/mcp route of the production build: a
 * client pinned to revision 2026-07-28 (the SDK v2 client: `server/discover`,
 * the per-request `_meta` envelope, no handshake) and a 2025-11-25 client (the
 * last 1.x SDK: the `initialize` handshake) each run a whole plan with a
 * review, read prompts and resources and get error results, against the same
 * server; then what only the new revision has, on the wire: the discover
 * answer with Cairn's instructions, `resultType`, cache hints, -32022 with the
 * supported revisions, the header/body checks, and a review the person answers
 * in their own client's form (elicitation as an input request). The rules of the loop are
 * tested in process (tests/use-cases/); the rest of the door in
 * tests/mcp-lifecycle.test.ts and tests/mcp-front-door.test.ts.
 */
import type { ElicitResult } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { isAppOnly } from "@/lib/mcp/apps";
import { SERVER_INSTRUCTIONS } from "@/lib/mcp/server";
import { TOOLS } from "@/lib/mcp/tools";
import { type AppServer, startAppServer } from "./support/app-server";
import {
  CLIENT_REVISIONS,
  connectAgentOn,
  connectModernAgent,
  type LoopAgent,
  type ModernAgent,
  plainResult,
} from "./support/mcp-client";

let app: AppServer;
/** The plan whose review the person answered in their client. */
let reviewedPlanId: string;

beforeAll(async () => {
  app = await startAppServer("pglite");
});
afterAll(async () => {
  await app?.stop();
});

describe.each(CLIENT_REVISIONS)("a %s client", (revision) => {
  let agent: LoopAgent;

  beforeAll(async () => {
    agent = await connectAgentOn(revision, app.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    await agent?.close();
  });

  it("keeps the checkpoint rule: no step moved ahead of an undecided checkpoint, no deliverable while it waits", async () => {
    const { planId } = await agent.ok("create_research_plan", {
      name: `Guarded over ${revision}`,
      researchQuestion: "q",
      steps: ["search", "checkpoint", "analyze"].map((stepType, i) => ({
        stepType,
        instructions: `Step ${i + 1}: do the ${stepType} work.`,
      })),
    });
    const { steps } = await agent.ok("get_plan_status", { planId });
    const ids = steps.map((s: { stepId: string }) => s.stepId);
    await agent.ok("modify_plan", {
      planId,
      action: "fail_step",
      stepId: ids[2],
      reason: "Park it.",
      modificationRationale: "Park step 3.",
    });
    expect(
      await agent.fails("modify_plan", {
        planId,
        action: "reorder_steps",
        stepIds: [ids[2], ids[0], ids[1]],
        modificationRationale: "Ahead of the person.",
      }),
    ).toMatch(/^FORBIDDEN: Step 2 is a checkpoint nobody has decided yet/);
    expect(
      await agent.fails("store_research_output", {
        planId,
        outputMediaType: "markdown_report",
        content: "# Early",
      }),
    ).toMatch(/^CONFLICT: .* takes no deliverable until a person decides it/);
  });

  it("runs a plan with a review from creation to completion", async () => {
    const created = await agent.ok("create_research_plan", {
      name: `[Scan] Heat pumps over ${revision}`,
      researchQuestion: "Are heat pumps worth it in cold climates?",
      steps: ["search", "checkpoint", "synthesize"].map((stepType, i) => ({
        stepType,
        instructions: `Step ${i + 1}: do the ${stepType} work.`,
      })),
    });
    const planId: string = created.planId;
    for (let order = 1; order <= 3; order++) {
      const next = await agent.ok("get_next_step", { planId });
      expect(next).toMatchObject({ status: "ready", step: { stepOrder: order } });
      if (next.step.stepType !== "checkpoint") {
        await agent.ok("submit_step_result", plainResult(planId, next.step.stepId));
        continue;
      }
      const review = await agent.ok("request_user_review", {
        planId,
        stepId: next.step.stepId,
        summary: "Here is what I found so far.",
        questions: ["Go deeper on costs?"],
      });
      expect(review).toMatchObject({ planStatus: "awaiting_review" });
      expect((await agent.ok("get_next_step", { planId })).status).toBe("awaiting_review");
      const decided = await agent.ok("submit_user_decision", {
        planId,
        decision: "modify",
        feedback: "Add the running costs.",
        reviewRequestId: review.reviewRequestId,
      });
      expect(decided).toMatchObject({ planStatus: "executing" });
      // A modify decision hands the checkpoint back with the person's feedback.
      const again = await agent.ok("get_next_step", { planId });
      expect(JSON.stringify(again)).toContain("Add the running costs.");
      await agent.ok("submit_step_result", plainResult(planId, again.step.stepId));
    }
    expect(await agent.ok("get_next_step", { planId })).toMatchObject({
      status: "plan_complete",
    });
    expect(await agent.ok("get_plan_status", { planId })).toMatchObject({
      status: "completed",
      progress: { percent: 100 },
    });
  });

  it("answers a refused call with an error result whose text starts with its code", async () => {
    expect(await agent.fails("get_next_step", { planId: "not-a-uuid" })).toMatch(
      /^VALIDATION_ERROR: /,
    );
  });

  it("asks for two approvals: a relayed one counts 1 of 2 once, the waiting answer shows it, a reject decides at once", async () => {
    const { planId, steps } = await agent.ok("create_research_plan", {
      name: `Quorum over ${revision}`,
      researchQuestion: "q",
      steps: [{ stepType: "checkpoint", instructions: "Show it." }],
      approvalsRequired: 2,
    });
    await agent.ok("get_next_step", { planId });
    // Left out of the request, the plan's number holds.
    const review = await agent.ok("request_user_review", {
      planId,
      stepId: steps[0].stepId,
      summary: "Two people should see this.",
    });
    expect(review.approvalsRequired).toBe(2);
    expect(
      await agent.fails("request_user_review", {
        planId,
        stepId: steps[0].stepId,
        summary: "Again.",
        approvalsRequired: 0,
      }),
    ).toMatch(/^VALIDATION_ERROR/);
    const decide = { planId, reviewRequestId: review.reviewRequestId };
    const first = await agent.ok("submit_user_decision", { ...decide, decision: "approve" });
    expect(first).toMatchObject({
      stepStatus: "awaiting_input",
      planStatus: "awaiting_review",
      channel: "relayed",
      approvals: { count: 1, required: 2 },
    });
    const again = await agent.ok("submit_user_decision", { ...decide, decision: "approve" });
    expect(again.approvals).toMatchObject({ count: 1, required: 2 });
    expect(again.hint).toContain("already counts");
    const waiting = await agent.ok("get_next_step", { planId });
    expect(waiting).toMatchObject({
      status: "awaiting_review",
      review: { approvals: { count: 1, required: 2 } },
    });
    const rejected = await agent.ok("submit_user_decision", {
      ...decide,
      decision: "reject",
      feedback: "Not this one.",
    });
    expect(rejected).toMatchObject({ stepStatus: "failed", planStatus: "failed" });
  });

  it("puts up a checkpoint it cannot propose a result for, which the decider approves with one", async () => {
    // Tenant B's, so the calls recorded for tenant A (checked last) stay as they are.
    const agent = await connectAgentOn(revision, app.mcpUrl, app.tenantB.key);
    onTestFinished(() => agent.close());
    const schema = {
      type: "object",
      required: ["verdict"],
      properties: { verdict: { enum: ["holds", "fails"] } },
    };
    const { planId } = await agent.ok("create_research_plan", {
      name: `Sign-off over ${revision}`,
      researchQuestion: "Does it hold?",
      steps: [{ stepType: "checkpoint", instructions: "Sign off.", outputSchema: schema }],
    });
    const next = await agent.ok("get_next_step", { planId });
    const review = await agent.ok("request_user_review", {
      planId,
      stepId: next.step.stepId,
      summary: "I cannot give the verdict: please enter it.",
    });
    expect(review).toMatchObject({ planStatus: "awaiting_review" });
    const decide = { planId, reviewRequestId: review.reviewRequestId, decision: "approve" };
    expect(await agent.fails("submit_user_decision", decide)).toMatch(
      /^VALIDATION_ERROR: result: step 1 has an outputSchema/,
    );
    expect(
      await agent.fails("submit_user_decision", { ...decide, result: { verdict: "perhaps" } }),
    ).toMatch(/^VALIDATION_ERROR: result does not satisfy the step's outputSchema: .*verdict/);
    const decided = await agent.ok("submit_user_decision", {
      ...decide,
      result: { verdict: "holds" },
    });
    expect(decided).toMatchObject({ stepStatus: "completed", planStatus: "completed" });
    const status = await agent.ok("get_plan_status", { planId });
    expect(status.steps[0]).toMatchObject({ status: "completed" });
  });
});

describe("the 2026-07-28 revision on the wire", () => {
  let modern: ModernAgent;

  beforeAll(async () => {
    modern = await connectModernAgent(app.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    await modern?.close();
  });

  it("is found by server/discover, with Cairn's instructions", () => {
    expect(modern.client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    const discovered = modern.client.getDiscoverResult();
    expect(discovered?.instructions).toBe(SERVER_INSTRUCTIONS);
    // Discover names the revisions served through it; 2025-era clients find
    // theirs through the initialize handshake (the other describe above).
    expect(discovered?.supportedVersions).toEqual(["2026-07-28"]);
    expect(discovered?.capabilities).toMatchObject({ tools: {}, prompts: {}, resources: {} });
  });

  it("serves the tools with their schemas, prompts and resources", async () => {
    const { tools } = await modern.client.listTools();
    // This client declares no MCP Apps extension: the cards' own tools are not listed to it.
    expect(tools).toHaveLength(TOOLS.filter((tool) => !isAppOnly(tool)).length);
    for (const tool of tools) expect(tool.outputSchema?.type, tool.name).toBe("object");
    const prompt = await modern.client.getPrompt({
      name: "research",
      arguments: { request: "heat pumps" },
    });
    expect(JSON.stringify(prompt.messages)).toContain("heat pumps");
    const active = await modern.client.readResource({ uri: "cairn://plans/active" });
    expect(active.contents[0]?.uri).toBe("cairn://plans/active");
  });

  it("tells the person where to decide, beside the JSON for the model, as this client renders no card", async () => {
    const { planId } = await modern.ok("create_research_plan", {
      name: "Review link without a card",
      researchQuestion: "q",
      steps: [{ stepType: "checkpoint", instructions: "Confirm with the person." }],
    });
    const next = await modern.ok("get_next_step", { planId });
    const forPerson = {
      type: "text",
      text: expect.stringMatching(
        new RegExp(
          `^A person's review is waiting in Cairn\\. Open the review page to decide: http.*/plans/${planId}#review$`,
        ),
      ),
    };
    const asked = await modern.client.callTool({
      name: "request_user_review",
      arguments: { planId, stepId: next.step.stepId, summary: "Check it." },
    });
    expect(asked.content).toEqual([
      { type: "text", text: JSON.stringify(asked.structuredContent) },
      forPerson,
    ]);
    const waiting = await modern.client.callTool({ name: "get_next_step", arguments: { planId } });
    expect(waiting.structuredContent).toMatchObject({ status: "awaiting_review" });
    expect(waiting.content).toEqual([expect.objectContaining({ type: "text" }), forPerson]);
  });

  const envelope = (version: string) => ({
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientInfo": { name: "raw-client", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  });

  /** One 2026-07-28 request as bytes; `headers` override the standard ones. */
  async function post(
    method: string,
    params: Record<string, unknown>,
    headers: Record<string, string> = {},
    version = "2026-07-28",
  ) {
    const response = await fetch(app.mcpUrl, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${app.tenantA.key}`,
        "MCP-Protocol-Version": version,
        "Mcp-Method": method,
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method,
        params: { ...params, _meta: envelope(version) },
      }),
    });
    return { status: response.status, body: await response.json() };
  }

  it("marks every result with resultType and caches only the lists that do not change", async () => {
    const tools = await post("tools/list", {});
    expect(tools.status).toBe(200);
    expect(tools.body.result).toMatchObject({
      resultType: "complete",
      ttlMs: 3_600_000,
      cacheScope: "public",
    });
    expect(tools.body.result.tools).toHaveLength(TOOLS.filter((tool) => !isAppOnly(tool)).length);
    // Each account's own plans: private and never cached.
    const resources = await post("resources/list", {});
    expect(resources.body.result).toMatchObject({
      resultType: "complete",
      ttlMs: 0,
      cacheScope: "private",
    });
    const ping = await post("tools/call", { name: "ping", arguments: {} }, { "Mcp-Name": "ping" });
    expect(ping.body.result).toMatchObject({
      resultType: "complete",
      structuredContent: { ok: true },
    });
  });

  it("answers a revision it does not speak with -32022 and the revisions it does", async () => {
    const answer = await post("tools/list", {}, {}, "2099-01-01");
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      code: -32022,
      data: { supported: expect.arrayContaining(["2026-07-28"]), requested: "2099-01-01" },
    });
  });

  it("refuses standard headers that contradict the body, or are missing", async () => {
    const mismatch = await post("tools/list", {}, { "Mcp-Method": "prompts/list" });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBeLessThan(0);
    expect(mismatch.body.result).toBeUndefined();
    const wrongVersion = await post("tools/list", {}, { "MCP-Protocol-Version": "2025-11-25" });
    expect(wrongVersion.status).toBe(400);
    expect(wrongVersion.body.result).toBeUndefined();
    const wrongName = await post(
      "tools/call",
      { name: "ping", arguments: {} },
      { "Mcp-Name": "list_active_plans" },
    );
    expect(wrongName.status).toBe(400);
    expect(wrongName.body.result).toBeUndefined();
  });
});

describe("a review the person answers in their own 2026-07-28 client", () => {
  let person: ModernAgent;
  /** What the client's form showed, and what the person answers in turn. */
  const shown: string[] = [];
  const answers: ElicitResult[] = [];
  let checkpointStepId: string;

  beforeAll(async () => {
    person = await connectModernAgent(app.mcpUrl, app.tenantA.key, {
      capabilities: { elicitation: { form: {} } },
    });
    person.client.setRequestHandler("elicitation/create", async (request) => {
      shown.push(request.params.message);
      const answer = answers.shift();
      if (!answer) throw new Error("the form was shown once more than expected");
      return answer;
    });
  });
  afterAll(async () => {
    await person?.close();
  });

  it("asks in a form through get_next_step and goes on with the person's decision", async () => {
    const created = await person.ok("create_research_plan", {
      name: "Reviewed in the client",
      researchQuestion: "Are heat pumps worth it?",
      steps: ["search", "checkpoint", "synthesize"].map((stepType, i) => ({
        stepType,
        instructions: `Step ${i + 1}: do the ${stepType} work.`,
      })),
    });
    reviewedPlanId = created.planId;
    const first = await person.ok("get_next_step", { planId: reviewedPlanId });
    await person.ok("submit_step_result", plainResult(reviewedPlanId, first.step.stepId));
    const checkpoint = await person.ok("get_next_step", { planId: reviewedPlanId });
    checkpointStepId = checkpoint.step.stepId;
    await person.ok("request_user_review", {
      planId: reviewedPlanId,
      stepId: checkpointStepId,
      summary: "Heat pumps pay off in six years.",
    });

    // modify without feedback is asked again, with the reason; then answered.
    answers.push(
      { action: "accept", content: { decision: "modify" } },
      { action: "accept", content: { decision: "modify", feedback: "Add the running costs." } },
    );
    const next = await person.ok("get_next_step", { planId: reviewedPlanId });
    expect(shown).toHaveLength(2);
    expect(shown[0]).toContain("Heat pumps pay off in six years.");
    expect(shown[1]).toMatch(/^feedback: modify needs feedback: say what should change/);
    // The checkpoint handed back with the person's words.
    expect(next).toMatchObject({ status: "ready", step: { stepId: checkpoint.step.stepId } });
    expect(next.step.instructions).toContain("Add the running costs.");
  });

  it("leaves the review to the tool flow when the person declines the form", async () => {
    // The checkpoint handed back by the modify, reviewed again.
    const again = await person.ok("request_user_review", {
      planId: reviewedPlanId,
      stepId: checkpointStepId,
      summary: "Again.",
    });
    answers.push({ action: "decline" });
    const waiting = await person.ok("get_next_step", { planId: reviewedPlanId });
    expect(waiting).toMatchObject({ status: "awaiting_review", review: { summary: "Again." } });
    expect(shown).toHaveLength(3);
    const decided = await person.ok("submit_user_decision", {
      planId: reviewedPlanId,
      reviewRequestId: again.reviewRequestId,
      decision: "approve",
    });
    expect(decided.planStatus).toBe("executing");
  });
});

describe("a review the person is sent to answer on the page, from a URL-only client", () => {
  it("asks the client to open the review page, and records nothing from its answer", async () => {
    const opened: { mode?: string; url?: string }[] = [];
    const client = await connectModernAgent(app.mcpUrl, app.tenantA.key, {
      capabilities: { elicitation: { url: {} } },
    });
    try {
      client.client.setRequestHandler("elicitation/create", async (request) => {
        opened.push(request.params as { mode?: string; url?: string });
        return { action: "accept" };
      });
      const created = await client.ok("create_research_plan", {
        name: "Reviewed on the page",
        researchQuestion: "q",
        steps: [{ stepType: "checkpoint", instructions: "Show the sources." }],
      });
      const step = await client.ok("get_next_step", { planId: created.planId });
      await client.ok("request_user_review", {
        planId: created.planId,
        stepId: step.step.stepId,
        summary: "Three sources.",
      });
      const waiting = await client.ok("get_next_step", { planId: created.planId });
      expect(opened).toEqual([
        expect.objectContaining({
          mode: "url",
          url: expect.stringMatching(new RegExp(`/plans/${created.planId}#review$`)),
        }),
      ]);
      // Opening the page decided nothing: the person decides there.
      expect(waiting).toMatchObject({ status: "awaiting_review" });
    } finally {
      await client.close();
    }
  });
});

describe("what the server recorded", () => {
  it("has the calls of both eras, and the decision made in a key's client as the key's relay", async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    await app.stopServer();
    const db = await app.openDatabase();
    try {
      const { mcpToolCallLog, planAuditLog } = await import("@/lib/db/schema");
      const { and, asc, eq } = await import("drizzle-orm");
      const calls = await db.db
        .select()
        .from(mcpToolCallLog)
        .where(eq(mcpToolCallLog.tenantId, app.tenantA.tenantId));
      // Three plans per era (the loop, the checkpoint rule, two approvals), one
      // more for the review in the client, one for the review page offered to a
      // URL-only client and one for the review link beside a card no client
      // renders, and two refused calls per era (one of them the quorum's).
      expect(calls.filter((c) => c.toolName === "create_research_plan")).toHaveLength(9);
      expect(calls.filter((c) => c.errorCode === "VALIDATION_ERROR")).toHaveLength(4);
      expect(calls.every((c) => c.apiKeyId === app.tenantA.apiKeyId)).toBe(true);

      const decisions = await db.db
        .select()
        .from(planAuditLog)
        .where(
          and(eq(planAuditLog.planId, reviewedPlanId), eq(planAuditLog.eventType, "user_reviewed")),
        )
        .orderBy(asc(planAuditLog.createdAt));
      const made = decisions.filter(
        (row) => (row.payload as { action?: string }).action === "decision",
      );
      // On an API key the form's answer is the key's relay of a person's
      // answer (a key proves no person; tests/mcp-in-client-answers.test.ts
      // has a connected app's), and so is the decision after the declined form.
      expect(made.map((row) => (row.payload as { channel?: string }).channel)).toEqual([
        "relayed",
        "relayed",
      ]);
      expect(made.map((row) => [row.actorType, row.actorId, row.actorLabel])).toEqual([
        ["api_key", app.tenantA.apiKeyId, 'key "Alpha agent" of alpha@example.com'],
        ["api_key", app.tenantA.apiKeyId, 'key "Alpha agent" of alpha@example.com'],
      ]);
    } finally {
      await db.close();
    }
  });
});
