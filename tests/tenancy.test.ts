/**
 * Tenancy, door by door, on the production build over PostgreSQL 15. Tenant
 * Beta's API key calls EVERY MCP tool that takes an id (found in tools/list:
 * planId, stepId, artifactId(s), executionId, reviewRequestId, stepIds,
 * completesStep) with tenant Alpha's ids: with all of them Alpha's, the answer
 * is NOT_FOUND; with one of them Alpha's and the rest Beta's own, the answer is
 * the one a random id gets (nothing is revealed). Beta's signed-in users get 404
 * for Alpha's plan, artifact and deliverable pages, and Beta's server actions
 * (review decisions, stalled-step recovery, API keys) with Alpha's ids change
 * nothing. "Nothing" is checked on Alpha's side: get_research_context before
 * and after, and a digest of every row of Alpha's in every table.
 */
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { createApiKey } from "@/lib/services/accounts/create-api-key";
import { type AppServer, startAppServer } from "./support/app-server";
import { type Agent, connectAgent, report } from "./support/mcp-client";
import { readRows } from "./support/rows";
import { type StubModel, startStubModel } from "./support/stub-model";
import { signInOverHttp, type WebSession } from "./support/web-session";

/** Every table with a tenant_id. */
const TENANT_TABLES = [
  "app_user",
  "api_key",
  "skill_execution",
  "research_plan",
  "plan_step",
  "plan_branching_condition",
  "plan_audit_log",
  "plan_revision",
  "plan_step_definition",
  "review_request",
  "review_decision",
  "review_snooze",
  "mcp_tool_call_log",
  "research_artifact",
  "research_output",
  "research_feedback",
] as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const INTERVIEW = {
  topic: "Heat pumps",
  researchType: "general_topic",
  scope: "Europe",
  depthSignals: [],
  skipQuestionsReason: "Clear request.",
  routingRationale: "One subject, low stakes -> scan.",
  delegatedTo: "scan",
  originalQuery: "Tell me about heat pumps.",
};

/** One tenant's ids of every kind a tool takes. */
type Ids = {
  planId: string;
  /** A step of planId in progress. */
  stepId: string;
  /** Every step of planId, in order. */
  stepIds: string[];
  /** A server-run step of planId, still pending (a valid completesStep target). */
  serverStepId: string;
  artifactId: string;
  executionId: string;
  /** A plan awaiting review, its step and its pending review. */
  reviewPlanId: string;
  reviewStepId: string;
  reviewRequestId: string;
  /** A claim of a third plan's completed step. */
  claimId: string;
};

/** An id field as tools/list shows it: a path in the tool's arguments. */
type IdPath =
  | "planId"
  | "stepId"
  | "stepIds"
  | "artifactIds"
  | "executionId"
  | "reviewRequestId"
  | "claimId"
  | "of"
  | "completesStep.planId"
  | "completesStep.stepId"
  | "fromStepId";

/** The values a call carries for its id fields; a field left undefined is left out. */
type IdValues = Partial<Record<IdPath, string | string[]>>;

/**
 * One way to call a tool: its arguments for given id values, the id fields it
 * carries, and those it cannot do without (which a one-field case fills with
 * the caller's own ids).
 */
type Variant = {
  tool: string;
  label: string;
  fields: IdPath[];
  required: IdPath[];
  /** Which of the caller's plans its own ids come from. */
  uses: "executing" | "review";
  args(ids: IdValues): Record<string, unknown>;
};

/** Drops undefined values, and completesStep when neither of its ids is given. */
function call(base: Record<string, unknown>, ids: IdValues): Record<string, unknown> {
  const args: Record<string, unknown> = { ...base };
  for (const path of ["planId", "stepId", "stepIds", "artifactIds", "executionId"] as const) {
    if (ids[path] !== undefined) args[path] = ids[path];
  }
  if (ids.reviewRequestId !== undefined) args.reviewRequestId = ids.reviewRequestId;
  if (ids.claimId !== undefined) args.claimId = ids.claimId;
  if (ids.of !== undefined) args.of = ids.of;
  if (ids.fromStepId !== undefined) args.fromStepId = ids.fromStepId;
  if (ids["completesStep.planId"] !== undefined || ids["completesStep.stepId"] !== undefined) {
    args.completesStep = {
      planId: ids["completesStep.planId"],
      stepId: ids["completesStep.stepId"],
    };
  }
  return args;
}

const modify = (action: string, field: "stepId" | "stepIds", extra = {}): Variant => ({
  tool: "modify_plan",
  label: action,
  fields: ["planId", field],
  required: ["planId", field],
  uses: "executing",
  args: (ids) => call({ action, modificationRationale: "Tenancy probe.", ...extra }, ids),
});

/**
 * The tools that need more than their ids to be called; a tool whose every
 * required field is an id is called with its ids alone (`idOnlyVariant`).
 */
const VARIANTS: Variant[] = [
  {
    tool: "log_skill_execution",
    label: "update",
    fields: ["executionId", "planId"],
    required: ["executionId"],
    uses: "executing",
    args: (ids) => call({ skillName: "research", status: "executing", metadata: {} }, ids),
  },
  {
    tool: "log_skill_execution",
    label: "create",
    fields: ["planId"],
    required: [],
    uses: "executing",
    args: (ids) => call({ skillName: "research", status: "started", metadata: INTERVIEW }, ids),
  },
  {
    tool: "search_sources",
    label: "",
    fields: ["planId", "completesStep.planId", "completesStep.stepId"],
    required: [],
    uses: "executing",
    args: (ids) => call({ query: "heat pump" }, ids),
  },
  {
    tool: "submit_step_result",
    label: "",
    fields: ["planId", "stepId"],
    required: ["planId", "stepId"],
    uses: "executing",
    args: (ids) => call({ result: { ok: true }, stepExecutionReport: report }, ids),
  },
  {
    tool: "read_evidence",
    label: "a claim whole",
    fields: ["planId", "claimId"],
    required: ["planId"],
    uses: "executing",
    args: (ids) => call({}, ids),
  },
  {
    tool: "read_evidence",
    label: "one value whole",
    fields: ["planId", "of"],
    required: ["planId", "of"],
    uses: "executing",
    args: (ids) => call({ part: "instructions" }, ids),
  },
  {
    tool: "add_step_evidence",
    label: "",
    fields: ["planId", "stepId"],
    required: ["planId", "stepId"],
    uses: "executing",
    args: (ids) => call({ evidence: { claims: [{ text: "Tenancy probe." }] } }, ids),
  },
  {
    tool: "store_research",
    label: "",
    fields: ["planId", "stepId", "completesStep.planId", "completesStep.stepId"],
    // stepId needs planId, so planId is always there.
    required: ["planId"],
    uses: "executing",
    args: (ids) =>
      call(
        {
          artifactType: "finding",
          title: "Probe",
          content: {},
          contentText: "Probe.",
          confidence: 0.5,
        },
        ids,
      ),
  },
  {
    tool: "extract_data",
    label: "",
    fields: ["artifactIds", "completesStep.planId", "completesStep.stepId"],
    required: [],
    uses: "executing",
    args: (ids) => call({ schema: { type: "object" }, text: "Probe." }, ids),
  },
  {
    tool: "request_user_review",
    label: "",
    fields: ["planId", "stepId"],
    required: ["planId", "stepId"],
    uses: "executing",
    args: (ids) => call({ summary: "Probe." }, ids),
  },
  {
    tool: "submit_user_decision",
    label: "",
    fields: ["planId", "stepId", "reviewRequestId"],
    required: ["planId", "reviewRequestId"],
    uses: "review",
    args: (ids) => call({ decision: "approve" }, ids),
  },
  {
    tool: "decide_in_review_card",
    label: "",
    fields: ["planId", "stepId", "reviewRequestId"],
    required: ["planId", "reviewRequestId"],
    uses: "review",
    args: (ids) => call({ decision: "approve", contentDigest: "0".repeat(64) }, ids),
  },
  modify("fail_step", "stepId", { reason: "Probe." }),
  modify("remove_step", "stepId"),
  modify("update_step_instructions", "stepId", { instructions: "Probe." }),
  modify("retry_step", "stepId"),
  modify("reorder_steps", "stepIds"),
  {
    tool: "cancel_plan",
    label: "cancel",
    fields: ["planId"],
    required: ["planId"],
    uses: "executing",
    args: (ids) => call({ reason: "Tenancy probe." }, ids),
  },
  {
    tool: "store_research_output",
    label: "",
    fields: ["planId", "executionId"],
    required: ["planId"],
    uses: "executing",
    args: (ids) => call({ outputMediaType: "chat_answer", content: "Probe." }, ids),
  },
  {
    tool: "submit_research_feedback",
    label: "",
    fields: ["planId", "executionId"],
    required: ["planId"],
    uses: "executing",
    args: (ids) =>
      call(
        { feedbackType: "initial", satisfaction: 3, summary: "Probe.", followUpRequested: false },
        ids,
      ),
  },
];

type ListedTool = { name: string; inputSchema: Record<string, unknown> };

/** A tool whose required fields are all ids, called with its ids and nothing else. */
function idOnlyVariant(tool: ListedTool): Variant | undefined {
  const fields = idPathsOf(tool.inputSchema) as IdPath[];
  const required = (tool.inputSchema.required ?? []) as IdPath[];
  if (fields.length === 0 || !required.every((name) => fields.includes(name))) return undefined;
  return {
    tool: tool.name,
    label: "",
    fields,
    required,
    uses: "executing",
    args: (ids) => call({}, ids),
  };
}

/** Every way the listed tools are probed: VARIANTS, and the id-only call of any other tool. */
function variantsFor(tools: ListedTool[]): Variant[] {
  const derived = tools
    .filter((tool) => !VARIANTS.some((variant) => variant.tool === tool.name))
    .flatMap((tool) => idOnlyVariant(tool) ?? []);
  return [...VARIANTS, ...derived];
}

/** The value a tenant's `ids` give an id field, in a variant's plan. */
function idValue(ids: Ids, path: IdPath, uses: Variant["uses"]): string | string[] {
  const review = uses === "review";
  switch (path) {
    case "planId":
      return review ? ids.reviewPlanId : ids.planId;
    case "stepId":
      return review ? ids.reviewStepId : ids.stepId;
    case "stepIds":
      return ids.stepIds;
    case "artifactIds":
      return [ids.artifactId];
    case "executionId":
      return ids.executionId;
    case "reviewRequestId":
      return ids.reviewRequestId;
    case "claimId":
      return ids.claimId;
    case "of":
      return ids.stepId;
    case "completesStep.planId":
      return ids.planId;
    case "completesStep.stepId":
      return ids.serverStepId;
    case "fromStepId":
      return review ? ids.reviewStepId : ids.stepId;
  }
}

/** The same shape of value with ids nobody has. */
function randomLike(value: string | string[]): string | string[] {
  return Array.isArray(value) ? value.map(() => randomUUID()) : randomUUID();
}

/** The id fields of a tool's input JSON Schema: known names, and any string in format uuid. */
function idPathsOf(schema: Record<string, unknown>, prefix = ""): string[] {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const paths: string[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const path = `${prefix}${name}`;
    const items = property.items as Record<string, unknown> | undefined;
    if (property.type === "object") paths.push(...idPathsOf(property, `${path}.`));
    else if (property.type === "string" && property.format === "uuid") paths.push(path);
    else if (property.type === "array" && items?.format === "uuid") paths.push(path);
  }
  return paths;
}

/** Every row of a tenant's, per table: how many, and a digest of their full contents. */
async function tenantSnapshot(handle: DatabaseHandle, tenantId: string) {
  const snapshot: Record<string, { rows: number; digest: string }> = {};
  for (const table of TENANT_TABLES) {
    const [row] = await readRows<{ rows: number; digest: string }>(
      handle.db,
      sql`select count(*)::int as rows,
            md5(coalesce(string_agg(t::text, '|' order by t.id), '')) as digest
          from ${sql.identifier(table)} t where t.tenant_id = ${tenantId}`,
    );
    snapshot[table] = row as { rows: number; digest: string };
  }
  return snapshot;
}

describe("tenancy on postgres: another tenant's ids change nothing and reveal nothing", () => {
  let app: AppServer;
  let model: StubModel;
  let handle: DatabaseHandle;
  let alpha: Agent;
  let beta: Agent;
  let alphaIds: Ids;
  let betaIds: Ids;
  let alphaOutputText: string;
  /** Alpha's rows after the last call of Alpha's. */
  let alphaAtEnd: Awaited<ReturnType<typeof tenantSnapshot>>;
  /** A second key of Beta's, revoked through the web in the last web test. */
  let betaSpareKey: { apiKeyId: string; key: string };

  /** A tenant's plans: one executing (step 1 in progress, step 2 a pending server step) and one awaiting review. */
  async function seed(agent: Agent, name: string): Promise<Ids> {
    const session = `${name}-session`;
    const execution = await agent.ok("log_skill_execution", {
      skillName: "research",
      status: "started",
      sessionId: session,
      metadata: INTERVIEW,
    });
    const plan = await agent.ok("create_research_plan", {
      name: `${name} executing plan`,
      researchQuestion: `What does ${name} know about heat pumps?`,
      sessionId: session,
      steps: [
        { stepType: "search", instructions: "Find sources." },
        {
          stepType: "search",
          instructions: "Library check.",
          tool: "search_sources",
          arguments: { query: "{{plan.researchQuestion}}", limit: 5 },
        },
        { stepType: "synthesize", instructions: "Write it up." },
      ],
    });
    const first = await agent.ok("get_next_step", { planId: plan.planId });
    expect(first.step.stepOrder).toBe(1);
    const artifact = await agent.ok("store_research", {
      artifactType: "finding",
      title: `${name} secret heat pump finding`,
      content: { secret: name },
      contentText: `Only ${name} may read this heat pump finding.`,
      confidence: 0.9,
      planId: plan.planId,
      stepId: first.step.stepId,
    });
    await agent.ok("store_research_output", {
      planId: plan.planId,
      outputMediaType: "markdown_report",
      content: `# ${name} deliverable\n\nOnly ${name} may read this.`,
    });
    await agent.ok("submit_research_feedback", {
      planId: plan.planId,
      feedbackType: "initial",
      satisfaction: 4,
      summary: "Fine.",
      followUpRequested: false,
    });
    const reviewPlan = await agent.ok("create_research_plan", {
      name: `${name} review plan`,
      researchQuestion: "q",
      steps: [
        { stepType: "checkpoint", instructions: "Check with the user." },
        { stepType: "search", instructions: "Search." },
      ],
    });
    const reviewStep = await agent.ok("get_next_step", { planId: reviewPlan.planId });
    const review = await agent.ok("request_user_review", {
      planId: reviewPlan.planId,
      stepId: reviewStep.step.stepId,
      summary: `${name} checkpoint.`,
    });
    const claimPlan = await agent.ok("create_research_plan", {
      name: `${name} claim plan`,
      researchQuestion: "q",
      steps: [{ stepType: "analyze", instructions: "Claim something." }],
    });
    const claimStep = await agent.ok("get_next_step", { planId: claimPlan.planId });
    await agent.ok("submit_step_result", {
      planId: claimPlan.planId,
      stepId: claimStep.step.stepId,
      result: {},
      stepExecutionReport: report,
      evidence: { claims: [{ text: `${name} claims this.` }] },
    });
    const claims = await agent.ok("read_evidence", { planId: claimPlan.planId });
    return {
      claimId: claims.evidence.claims[0].claimId,
      planId: plan.planId,
      stepId: first.step.stepId,
      stepIds: plan.steps.map((s: { stepId: string }) => s.stepId),
      serverStepId: plan.steps[1].stepId,
      artifactId: artifact.artifactId,
      executionId: execution.executionId,
      reviewPlanId: reviewPlan.planId,
      reviewStepId: reviewStep.step.stepId,
      reviewRequestId: review.reviewRequestId,
    };
  }

  beforeAll(async () => {
    model = await startStubModel();
    // A configured model, so that extract_data reads its artifacts rather than
    // stopping at LLM_NOT_CONFIGURED.
    app = await startAppServer("postgres", {
      env: { CAIRN_LLM_BASE_URL: model.baseUrl, CAIRN_LLM_MODEL: "stub" },
    });
    handle = await app.openDatabase();
    alpha = await connectAgent(app.mcpUrl, app.tenantA.key);
    beta = await connectAgent(app.mcpUrl, app.tenantB.key);
    alphaIds = await seed(alpha, "Alpha");
    betaIds = await seed(beta, "Beta");
    alphaOutputText = "Only Alpha may read this.";
    const spare = await createApiKey(handle.db, { email: app.tenantB.email, name: "spare" });
    betaSpareKey = { apiKeyId: spare.apiKeyId, key: spare.key };
  });
  afterAll(async () => {
    await alpha?.close();
    await beta?.close();
    await handle?.close();
    await app?.stop();
    await model?.stop();
  });

  /** Waits for the tool-call log (written after each answer), then snapshots Alpha's rows. */
  async function alphaRows() {
    await sleep(300);
    return tenantSnapshot(handle, app.tenantA.tenantId);
  }

  it("covers every MCP tool that takes an id", async () => {
    const { tools } = await beta.client.listTools();
    const withIds = tools
      .map((tool) => ({
        name: tool.name,
        paths: idPathsOf(tool.inputSchema as Record<string, unknown>).sort(),
      }))
      .filter((tool) => tool.paths.length > 0);
    const variants = variantsFor(tools);
    const covered = withIds.map((tool) => ({
      name: tool.name,
      paths: [
        ...new Set(variants.filter((v) => v.tool === tool.name).flatMap((v) => v.fields)),
      ].sort(),
    }));
    expect(covered).toEqual(withIds);
  });

  it("answers NOT_FOUND to every tool given Alpha's ids, reveals nothing with one of them, and changes nothing", async () => {
    const contextBefore = await alpha.ok("get_research_context", { planId: alphaIds.planId });
    const reviewContextBefore = await alpha.ok("get_research_context", {
      planId: alphaIds.reviewPlanId,
    });
    const before = await alphaRows();
    const betaStatusBefore = await beta.ok("get_research_context", { planId: betaIds.planId });

    const problems: string[] = [];
    for (const variant of variantsFor((await beta.client.listTools()).tools)) {
      const name = `${variant.tool}${variant.label ? ` ${variant.label}` : ""}`;
      // Every id Alpha's.
      const allForeign: IdValues = {};
      for (const path of variant.fields) allForeign[path] = idValue(alphaIds, path, variant.uses);
      const answer = await beta.call(variant.tool, variant.args(allForeign));
      if (!answer.isError || !answer.text.startsWith("NOT_FOUND")) {
        problems.push(`${name} with Alpha's ids: ${answer.text.slice(0, 300)}`);
      }
      if (answer.text.includes(alphaOutputText) || answer.text.includes("Alpha secret")) {
        problems.push(`${name} revealed Alpha's content: ${answer.text.slice(0, 300)}`);
      }

      // One id Alpha's, the ones the call needs Beta's own: the answer must be
      // the one an id nobody has gets.
      for (const path of variant.fields) {
        const own: IdValues = {};
        const group = path.startsWith("completesStep.")
          ? (["completesStep.planId", "completesStep.stepId"] as IdPath[])
          : [];
        for (const other of [...variant.required, ...group]) {
          own[other] = idValue(betaIds, other, variant.uses);
        }
        const foreignValue = idValue(alphaIds, path, variant.uses);
        const randomValue = randomLike(foreignValue);
        const withForeign = await beta.call(
          variant.tool,
          variant.args({ ...own, [path]: foreignValue }),
        );
        const withRandom = await beta.call(
          variant.tool,
          variant.args({ ...own, [path]: randomValue }),
        );
        const mask = (text: string, value: string | string[]) =>
          [value].flat().reduce((masked, id) => masked.replaceAll(id, "<id>"), text);
        const label = `${name} with Alpha's ${path}`;
        if (withForeign.isError !== withRandom.isError) {
          problems.push(
            `${label}: ${withForeign.text.slice(0, 200)} | random: ${withRandom.text.slice(0, 200)}`,
          );
        } else if (withForeign.isError) {
          if (mask(withForeign.text, foreignValue) !== mask(withRandom.text, randomValue)) {
            problems.push(`${label}: "${withForeign.text}" but a random id: "${withRandom.text}"`);
          }
          // Not a VALIDATION_ERROR: the call was well formed, so the id was looked up.
          if (withForeign.text.startsWith("VALIDATION_ERROR")) {
            problems.push(`${label} is malformed: ${withForeign.text.slice(0, 200)}`);
          }
        } else {
          // Only a search filtered by an unknown plan succeeds: with no hits.
          expect(variant.tool, label).toBe("search_sources");
          expect(withForeign.data.results, label).toEqual([]);
          expect(withRandom.data.results, label).toEqual([]);
        }
      }
    }
    expect(problems).toEqual([]);

    // Nor through the resources, nor in Beta's lists and searches.
    await expect(
      beta.client.readResource({ uri: `cairn://plans/${alphaIds.planId}` }),
    ).rejects.toThrow(/-32602: Resource not found/);
    const active = await beta.ok("list_active_plans", { limit: 100 });
    const betaPlans = active.plans.map((p: { planId: string }) => p.planId).sort();
    expect(betaPlans).toEqual([betaIds.planId, betaIds.reviewPlanId].sort());
    const found = await beta.ok("search_sources", { query: "Alpha secret heat pump finding" });
    expect(found.results.map((r: { artifactId: string }) => r.artifactId)).not.toContain(
      alphaIds.artifactId,
    );

    // Alpha's side: the same context and not one row changed.
    expect(await alphaRows()).toEqual(before);
    expect(await alpha.ok("get_research_context", { planId: alphaIds.planId })).toEqual(
      contextBefore,
    );
    expect(await alpha.ok("get_research_context", { planId: alphaIds.reviewPlanId })).toEqual(
      reviewContextBefore,
    );
    // Beta's own plan did not move either: no probe had Beta's ids only.
    const betaAfter = await beta.ok("get_research_context", { planId: betaIds.planId });
    expect(betaAfter.steps.map((s: { status: string }) => s.status)).toEqual(
      betaStatusBefore.steps.map((s: { status: string }) => s.status),
    );
    expect(model.requests()).toBe(0);
  }, 120_000);

  describe("the web door", () => {
    let researcher: WebSession;
    let admin: WebSession;

    beforeAll(async () => {
      researcher = await signInOverHttp(app.url, app.tenantB.researcherEmail);
      admin = await signInOverHttp(app.url, app.tenantB.email);
    });

    it("answers 404 for Alpha's plan, artifact and deliverable, and lists none of Alpha's", async () => {
      for (const session of [researcher, admin]) {
        // Beta's own pages answer, so the 404s are not a signed-out session's.
        expect((await session.get(`/plans/${betaIds.planId}`)).status).toBe(200);
        expect((await session.get(`/library/${betaIds.artifactId}`)).status).toBe(200);
        expect((await session.get(`/plans/${betaIds.planId}/deliverable`)).status).toBe(200);
        const full = (ids: Ids) => [
          `/plans/${ids.reviewPlanId}/full?review=${ids.reviewRequestId}&part=summary`,
          `/plans/${ids.planId}/full?step=${ids.stepId}&part=instructions`,
        ];
        for (const path of full(betaIds)) {
          expect((await session.get(path)).status, path).toBe(200);
        }

        for (const path of [
          ...full(alphaIds),
          `/plans/${alphaIds.planId}`,
          `/plans/${alphaIds.reviewPlanId}`,
          `/plans/${alphaIds.planId}?audit=not-a-cursor`,
          `/library/${alphaIds.artifactId}`,
          `/plans/${alphaIds.planId}/deliverable`,
        ]) {
          const response = await session.get(path);
          expect(response.status, path).toBe(404);
          const body = await response.text();
          expect(body, path).not.toContain("Alpha secret");
          expect(body, path).not.toContain(alphaOutputText);
        }
        for (const path of ["/plans", "/library", "/library?q=secret+heat+pump+finding"]) {
          const response = await session.get(path);
          expect(response.status, path).toBe(200);
          const body = await response.text();
          expect(body, path).toContain("Beta");
          expect(body, path).not.toContain("Alpha executing plan");
          expect(body, path).not.toContain("Alpha secret");
        }
      }
    });

    it("changes nothing of Alpha's through Beta's server actions", async () => {
      const before = await alphaRows();
      const notFound = "Not found: it does not exist in your account.";
      const reviewPage = `/plans/${betaIds.reviewPlanId}`;
      const decisions: Record<string, string>[] = [
        {
          planId: alphaIds.reviewPlanId,
          reviewRequestId: alphaIds.reviewRequestId,
          decision: "approve",
        },
        {
          planId: alphaIds.reviewPlanId,
          reviewRequestId: alphaIds.reviewRequestId,
          decision: "reject",
        },
        {
          planId: alphaIds.reviewPlanId,
          reviewRequestId: alphaIds.reviewRequestId,
          decision: "modify",
          feedback: "Probe.",
        },
      ];
      for (const session of [researcher, admin]) {
        for (const fields of decisions) {
          const answer = await session.action(reviewPage, "decideReviewAction", fields);
          expect(answer.text, JSON.stringify(fields)).toContain(notFound);
        }
        // Nor can Beta snooze or un-snooze Alpha's review out of its own inbox.
        const review = { planId: alphaIds.reviewPlanId, reviewRequestId: alphaIds.reviewRequestId };
        const snoozed = await session.action(reviewPage, "snoozeReviewAction", {
          ...review,
          until: "hour",
          timeZone: "UTC",
        });
        expect(snoozed.text).toContain(notFound);
        const unsnoozed = await session.action(reviewPage, "unsnoozeReviewAction", review);
        expect(unsnoozed.text).toContain(notFound);
        // Beta's own plan with Alpha's review: refused, Beta's review stays pending.
        const mixed = await session.action(reviewPage, "decideReviewAction", {
          planId: betaIds.reviewPlanId,
          reviewRequestId: alphaIds.reviewRequestId,
          decision: "approve",
        });
        expect(mixed.text).not.toContain("Approved");
        expect(mixed.text).toMatch(/"status":"(error|conflict)"/);
      }

      for (const fields of [
        { action: "fail_step", planId: alphaIds.planId, stepId: alphaIds.stepId },
        { action: "retry_step", planId: alphaIds.planId, stepId: alphaIds.stepId },
        { action: "fail_step", planId: betaIds.planId, stepId: alphaIds.stepId },
      ]) {
        const answer = await admin.action("/admin/stalled", "recoverStepAction", fields);
        expect(answer.text, JSON.stringify(fields)).toMatch(/"status":"error"/);
        expect(answer.headers.get("x-action-redirect"), JSON.stringify(fields)).toBeNull();
      }
      const revoke = await admin.action("/admin/users", "revokeKeyAction", {
        apiKeyId: app.tenantA.apiKeyId,
      });
      expect(revoke.text).toContain(notFound);
      const key = await admin.action("/admin/users", "createKeyAction", {
        email: app.tenantA.email,
        name: "stolen",
      });
      expect(key.text).toContain(notFound);
      expect(key.text).not.toContain("cairn_");

      // A researcher is not an admin: the admin actions are not there for them.
      for (const [page, action, fields] of [
        ["/admin/users", "revokeKeyAction", { apiKeyId: app.tenantA.apiKeyId }],
        ["/admin/users", "createKeyAction", { email: app.tenantA.email }],
        [
          "/admin/stalled",
          "recoverStepAction",
          { action: "fail_step", planId: alphaIds.planId, stepId: alphaIds.stepId },
        ],
        ["/admin/failed", "forkFailedPlansAction", {}],
      ] as const) {
        const answer = await researcher.action(page, action, fields);
        expect(answer.status, action).toBe(404);
      }

      expect(await alphaRows()).toEqual(before);
      expect((await alpha.ok("get_plan_status", { planId: alphaIds.reviewPlanId })).status).toBe(
        "awaiting_review",
      );
      expect((await alpha.ok("ping")).ok).toBe(true);
      alphaAtEnd = await alphaRows();
    });

    it("does change Beta's own things through the same actions (the probes reached them)", async () => {
      const approved = await researcher.action(
        `/plans/${betaIds.reviewPlanId}`,
        "decideReviewAction",
        {
          planId: betaIds.reviewPlanId,
          reviewRequestId: betaIds.reviewRequestId,
          decision: "approve",
        },
      );
      expect(approved.text).toContain("Approved: the step is complete. The plan continues.");
      expect((await beta.ok("get_plan_status", { planId: betaIds.reviewPlanId })).status).toBe(
        "executing",
      );

      const failed = await admin.action("/admin/stalled", "recoverStepAction", {
        action: "fail_step",
        planId: betaIds.planId,
        stepId: betaIds.stepId,
      });
      // Success redirects to the stalled page with the outcome.
      expect(failed.headers.get("x-action-redirect")).toContain("/admin/stalled?done=fail_step");
      const context = await beta.ok("get_research_context", { planId: betaIds.planId });
      expect(context.steps[0]).toMatchObject({ stepId: betaIds.stepId, status: "failed" });
      // The bulk fork from failure forks Beta's failed plans: that one among them.
      const forked = await admin.action("/admin/failed", "forkFailedPlansAction", {});
      expect(forked.text).toMatch(/Forked \d+ plans? from (its|their) failed step/);
      const forks = (await beta.ok("get_plan_status", { planId: betaIds.planId })).forks;
      expect(forks).toHaveLength(1);

      const revoked = await admin.action("/admin/users", "revokeKeyAction", {
        apiKeyId: betaSpareKey.apiKeyId,
      });
      expect(revoked.text).toContain("Key revoked: it no longer works.");
      const refused = await fetch(app.mcpUrl, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${betaSpareKey.key}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      expect(refused.status).toBe(401);
    });
  });

  it("leaves no audit row of Beta's among Alpha's, nor any of Alpha's written by Beta", async () => {
    await app.stopServer();
    const rows = await readRows<{ tenant: string; actor: string | null; plan: string | null }>(
      handle.db,
      sql`select a.tenant_id::text as tenant, a.actor_id::text as actor, p.tenant_id::text as plan
          from plan_audit_log a left join research_plan p on p.id = a.plan_id`,
    );
    const betaActors = new Set<string>([
      app.tenantB.apiKeyId,
      app.tenantB.userId,
      betaSpareKey.apiKeyId,
    ]);
    const [betaResearcher] = await readRows<{ id: string }>(
      handle.db,
      sql`select id::text as id from app_user where email = ${app.tenantB.researcherEmail}`,
    );
    betaActors.add(betaResearcher?.id ?? "");
    const alphaRowsOfBeta = rows.filter(
      (r) => r.tenant === app.tenantA.tenantId && r.actor !== null && betaActors.has(r.actor),
    );
    expect(alphaRowsOfBeta).toEqual([]);
    // Every row's tenant is its plan's tenant.
    expect(rows.filter((r) => r.plan !== null && r.plan !== r.tenant)).toEqual([]);
    // Beta's calls after Alpha's last one changed none of Alpha's rows, audit rows included.
    const alphaNow = await tenantSnapshot(handle, app.tenantA.tenantId);
    expect(alphaNow).toEqual(alphaAtEnd);
    expect(alphaNow.plan_audit_log?.rows).toBe(
      rows.filter((r) => r.tenant === app.tenantA.tenantId).length,
    );
  });
});
