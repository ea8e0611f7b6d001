/**
 * The research skills as MCP prompts and as downloadable skill files, and plans
 * as MCP resources with tenant isolation, through the production build over
 * HTTP on both backends.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS } from "@/lib/mcp/tools";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { type Agent, connectAgent, report } from "./support/mcp-client";

const SKILL_NAMES = [
  "research",
  "research-scan",
  "research-deep",
  "research-deep-loop",
  "research-output",
];
/** The parts an agent reaches from another skill, which need no message. */
const NO_REQUEST_NEEDED = ["research-deep-loop", "research-output"];
/** About 4k tokens, at the 4 characters a token the issue measured with (56 KB, ~14k tokens). */
const PROMPT_CHARS = 16_000;
const REQUEST =
  "Compare pgvector, Qdrant and Pinecone for our 50M-document RAG product, thoroughly.";

function resourceText(contents: ({ text: string } | { blob: string })[]): string {
  const first = contents[0];
  return first && "text" in first ? first.text : "";
}

function promptText(result: { messages: { content: { type: string; text?: string } }[] }) {
  return result.messages.map((m) => (m.content.type === "text" ? m.content.text : "")).join("\n");
}

describe.each(BACKENDS)("prompts and resources on %s", (backend) => {
  let app: AppServer;
  let agent: Agent;
  let browsedPlanId = "";

  beforeAll(async () => {
    app = await startAppServer(backend);
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  it("announces prompts and resources in its capabilities", () => {
    expect(agent.client.getServerCapabilities()).toMatchObject({
      prompts: { listChanged: false },
      resources: { subscribe: false, listChanged: false },
    });
  });

  it("lists the five skills as prompts that take the user's message as `request`", async () => {
    const { prompts } = await agent.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(SKILL_NAMES);
    for (const prompt of prompts) {
      expect(prompt.title, prompt.name).toBeTruthy();
      expect(prompt.description?.length, prompt.name).toBeGreaterThan(80);
      expect(prompt.arguments).toEqual([
        expect.objectContaining({
          name: "request",
          required: !NO_REQUEST_NEEDED.includes(prompt.name),
        }),
      ]);
    }
  });

  it("puts the request into the research prompt, which names the get_skill calls for the rest", async () => {
    const result = await agent.client.getPrompt({
      name: "research",
      arguments: { request: REQUEST },
    });
    expect(result.messages).toHaveLength(1);
    expect(result.messages[0]?.role).toBe("user");
    const text = promptText(result);
    expect(text).toContain(`<user_request>\n${REQUEST}\n</user_request>`);
    expect(text).not.toContain("{{request}}");
    // The router's own content: the eight elements, the clarification and routing rules...
    for (const element of [
      "topic",
      "researchType",
      "scope",
      "depthSignals",
      "decisionContext",
      "knownContext",
      "outputMediaType",
      "outputFormattingInstructions",
    ]) {
      expect(text, element).toContain(`\`${element}\``);
    }
    expect(text).toContain("Never more than two questions");
    expect(text).toContain("routingRationale");
    expect(text).toContain('"delegatedTo": "scan | deep"');
    expect(text).toContain('search_sources({ "query": "<the topic\'s key terms>", "limit": 5 })');
    for (const outcome of ["Use existing", "Refresh", "Unique"]) expect(text).toContain(outcome);
    // ...and not the scan, deep and output skills: the agent fetches each when it gets there.
    expect(text).not.toContain("# Research scan");
    expect(text).not.toContain("# Research deep");
    expect(text).not.toContain("# Research output");
    for (const next of ["research-scan", "research-deep", "research-output"]) {
      expect(text, next).toContain(`get_skill({ "name": "${next}" })`);
    }
    expect(text).toContain("plan_cancelled");
    expect(text).toContain("cancel_plan");
  });

  it("keeps every prompts/get under about 4k tokens, and get_skill answers each part in full", async () => {
    for (const name of SKILL_NAMES) {
      const text = promptText(
        await agent.client.getPrompt({ name, arguments: { request: REQUEST } }),
      );
      expect(text.length, name).toBeLessThanOrEqual(PROMPT_CHARS);
      const fetched = await agent.ok("get_skill", { name });
      expect(fetched.name).toBe(name);
      expect(fetched.text.length, name).toBeLessThanOrEqual(PROMPT_CHARS);
      // The same content as the prompt, with the request as given when the research began.
      expect(fetched.text.replace(/The user's research request, as given[^\n]*/, "")).toBe(
        text.replace(`<user_request>\n${REQUEST}\n</user_request>`, ""),
      );
    }
    // The deep loop handles a cancelled plan and names the call that cancels one.
    const loop = (await agent.ok("get_skill", { name: "research-deep-loop" })).text;
    expect(loop).toContain('`"plan_cancelled"`');
    expect(loop).toContain("cancel_plan({ planId, reason })");
    expect(loop).toContain("request_user_review");
    expect(loop).toContain('get_skill({ "name": "research-output" })');
    expect(await agent.fails("get_skill", { name: "research-everything" })).toMatch(
      /^VALIDATION_ERROR/,
    );
  });

  it("gives the deep prompt quality gates, a critique and a checkpoint for each research type", async () => {
    const text = promptText(
      await agent.client.getPrompt({ name: "research-deep", arguments: { request: REQUEST } }),
    );
    for (const type of ["general_topic", "competitive_analysis", "decision_support"]) {
      expect(text).toContain(`### ${type}`);
    }
    expect(text).toContain('"conditionExpression": "result.sourceCount < 5"');
    expect(text).toContain('"ifTrueAction": "skip_to"');
    expect(text).toContain("`critique`");
    expect(text).toContain('get_skill({ "name": "research-deep-loop" })');
    expect(text).not.toContain("# Research output");
    expect(text).not.toContain("# Research (router)");
  });

  it("accepts research-output without a request and refuses unknown prompts and missing requests", async () => {
    const output = promptText(await agent.client.getPrompt({ name: "research-output" }));
    expect(output).toContain("store_research_output");
    expect(output).toContain("ask the user");
    await expect(agent.client.getPrompt({ name: "research" })).rejects.toThrow(
      /needs the argument "request"/,
    );
    await expect(agent.client.getPrompt({ name: "summon", arguments: {} })).rejects.toThrow(
      /Unknown prompt "summon"/,
    );
  });

  it("names only tools that exist, with fields their input schemas accept", async () => {
    const known = new Set<string>(TOOLS.map((t) => t.name));
    for (const name of SKILL_NAMES) {
      const text = promptText(
        await agent.client.getPrompt({ name, arguments: { request: REQUEST } }),
      );
      const called = [...text.matchAll(/\b([a-z]+(?:_[a-z]+)+)\(/g)].map((m) => m[1]);
      expect(called.length, name).toBeGreaterThan(0);
      for (const tool of called) expect(known.has(tool ?? ""), `${name}: ${tool}`).toBe(true);
    }
    // Every field the skills pass to a tool call in their JSON examples is in that tool's schema.
    const { tools } = await agent.client.listTools();
    const fieldsOf = new Map(
      tools.map((t) => [t.name, new Set(Object.keys(t.inputSchema.properties ?? {}))]),
    );
    const all = SKILL_NAMES.map((n) => readFileSync(`skills/${n}.md`, "utf8")).join("\n");
    let checked = 0;
    for (const [, tool, body] of all.matchAll(/([a-z_]+)\(\{\n([\s\S]*?)\n\s*\}\)/g)) {
      const lines = [...(body ?? "").matchAll(/^( *)"([A-Za-z]+)":/gm)];
      // The call's own fields are the least indented ones; deeper ones belong to nested objects.
      const depth = Math.min(...lines.map((m) => m[1]?.length ?? 0));
      for (const [, indent, field] of lines) {
        if (indent?.length !== depth) continue;
        checked++;
        expect(fieldsOf.get(tool ?? "")?.has(field ?? ""), `${tool}.${field}`).toBe(true);
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it("serves each skill as a Markdown file to download, without sign-in", async () => {
    for (const name of SKILL_NAMES) {
      const response = await fetch(`${app.url}/skills/${name}`);
      expect(response.status, name).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
      expect(response.headers.get("content-disposition")).toBe(`attachment; filename="${name}.md"`);
      const body = await response.text();
      expect(body.startsWith(`---\nname: ${name}\ndescription: `)).toBe(true);
      expect(body).not.toContain("{{request}}");
      expect(body).toContain("The user's message that invoked this skill");
    }
    for (const path of ["/skills/unknown", "/skills/..%2Fpackage.json", "/skills/research.txt"]) {
      const response = await fetch(`${app.url}${path}`);
      expect(response.status, path).toBe(404);
      await response.body?.cancel();
    }
    const withExtension = await fetch(`${app.url}/skills/research.md`);
    expect(withExtension.status).toBe(200);
    await withExtension.body?.cancel();
  });

  it("lists the active plans and each of them as resources, and reads them", async () => {
    const empty = await agent.client.listResources();
    expect(empty.resources).toEqual([
      expect.objectContaining({ uri: "cairn://plans/active", name: "active-plans" }),
    ]);
    const { resourceTemplates } = await agent.client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      expect.objectContaining({
        uriTemplate: "cairn://plans/{planId}",
        mimeType: "application/json",
      }),
    ]);

    const created = await agent.ok("create_research_plan", {
      name: "[Scan] Vector databases",
      researchQuestion: "Which vector database fits our RAG product?",
      steps: [
        { stepType: "search", instructions: "Find benchmarks." },
        { stepType: "synthesize", instructions: "Answer." },
      ],
    });
    const planId: string = created.planId;
    browsedPlanId = planId;
    const step = await agent.ok("get_next_step", { planId });
    await agent.ok("submit_step_result", {
      planId,
      stepId: step.step.stepId,
      result: { sourceCount: 4 },
      confidence: 0.7,
      stepExecutionReport: report,
    });
    await agent.ok("store_research", {
      artifactType: "finding",
      title: "HNSW recall at 10 ms",
      content: {},
      contentText: "HNSW indexes reach 95 percent recall under 10 ms.",
      confidence: 0.8,
      planId,
      stepId: step.step.stepId,
    });

    const { resources } = await agent.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      "cairn://plans/active",
      `cairn://plans/${planId}`,
    ]);
    expect(resources[1]).toMatchObject({
      name: "[Scan] Vector databases",
      mimeType: "application/json",
      description: expect.stringContaining("Which vector database fits our RAG product?"),
    });

    const active = await agent.client.readResource({ uri: "cairn://plans/active" });
    expect(active.contents[0]).toMatchObject({
      uri: "cairn://plans/active",
      mimeType: "application/json",
    });
    const list = JSON.parse(resourceText(active.contents));
    expect(list.plans).toEqual([expect.objectContaining({ planId, status: "executing" })]);

    const plan = await agent.client.readResource({ uri: `cairn://plans/${planId}` });
    const context = JSON.parse(resourceText(plan.contents));
    expect(context.plan).toMatchObject({ planId, name: "[Scan] Vector databases" });
    expect(context.steps.map((s: { status: string }) => s.status)).toEqual([
      "completed",
      "pending",
    ]);
    expect(context.artifacts).toEqual([expect.objectContaining({ title: "HNSW recall at 10 ms" })]);
  });

  it("answers a missing or foreign plan resource with a not-found error", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "Alpha only",
      researchQuestion: "q",
      steps: [{ stepType: "search", instructions: "s" }],
    });
    const uri = `cairn://plans/${created.planId}`;
    const beta = await connectAgent(app.mcpUrl, app.tenantB.key);
    try {
      // -32602 with the uri in the data, as revision 2026-07-28 asks and the
      // SDK answers on every revision (-32002 before it).
      await expect(beta.client.readResource({ uri })).rejects.toMatchObject({
        code: -32602,
        data: { uri },
        message: expect.stringContaining(`Resource not found: ${uri}`),
      });
      const { resources } = await beta.client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(["cairn://plans/active"]);
      const active = await beta.client.readResource({ uri: "cairn://plans/active" });
      expect(JSON.parse(resourceText(active.contents))).toEqual({ plans: [], nextCursor: null });
    } finally {
      await beta.close();
    }
    for (const missing of [
      "cairn://plans/6f1c0d2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f",
      "cairn://plans/not-a-uuid",
      "https://example.org/plans/1",
    ]) {
      await expect(agent.client.readResource({ uri: missing })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("Resource not found"),
      });
    }
  });

  it("recorded no resumed session for reading a plan resource", async () => {
    await app.stopServer();
    const db = await app.openDatabase();
    try {
      const { planAuditLog } = await import("@/lib/db/schema");
      const { asc, eq } = await import("drizzle-orm");
      const rows = await db.db
        .select({ eventType: planAuditLog.eventType })
        .from(planAuditLog)
        .where(eq(planAuditLog.planId, browsedPlanId))
        .orderBy(asc(planAuditLog.createdAt));
      // Browsing is not resuming; get_research_context is, and records it.
      expect(rows.map((r) => r.eventType)).toEqual([
        "plan_modified",
        "step_started",
        "step_completed",
      ]);
    } finally {
      await db.close();
    }
  });
});
