/**
 * Fuzzing every MCP tool with fast-check. Inputs are built from each tool's own
 * input JSON Schema as tools/list serves it (with realistic values for a few
 * fields, and ids of the plans, steps, reviews, artifacts and executions that
 * exist, often coherent with each other), then mutated: wrong types, missing and
 * extra fields, prototype keys, huge strings, deep nesting, JSON values past
 * their field's size limit, odd Unicode, and arguments that are not an object
 * at all.
 *
 * Most cases run in process, as lib/mcp/server.ts runs a call: the arguments
 * must be a JSON object (the SDK's CallToolRequestSchema), then `tool.run(ctx,
 * args)` (each use case parses its input with the tool's schema). A sample runs
 * over HTTP against the production build. Every case must end in a success whose
 * output fits the tool's output schema, or an expected failure: an AppError
 * other than INTERNAL_ERROR (over HTTP: an error result whose text starts with
 * its code, or a JSON-RPC invalid-params error), never an HTTP 5xx. A failure
 * writes nothing, and after every case that wrote, the database invariants hold:
 * each plan's audit trail replays to its steps, a completed plan's steps are all
 * terminal, a plan awaiting review has a step awaiting input, and an ended plan
 * has no open review.
 *
 * The seed is printed; CAIRN_FUZZ_SEED=<seed> replays the same inputs (the
 * database's state also depends on time: leases and stalls), CAIRN_FUZZ_RUNS
 * and CAIRN_FUZZ_HTTP_RUNS change the numbers of cases.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import type { ToolDefinition } from "@/lib/mcp/define-tool";
import { TOOLS } from "@/lib/mcp/tools";
import { isAppError } from "@/lib/plan-engine/app-error";
import type { StepStatus } from "@/lib/plan-engine/states";
import type { ServiceContext } from "@/lib/services/shared/context";
import { type AppServer, startAppServer } from "./support/app-server";
import { replayAudit } from "./support/audit-replay";
import { freshDatabase } from "./support/databases";
import { tenantContext } from "./support/in-process";
import { type Agent, connectAgent, report } from "./support/mcp-client";
import { readRows } from "./support/rows";
import { type StubModel, startStubModel } from "./support/stub-model";

const SEED = Number(process.env.CAIRN_FUZZ_SEED ?? 20_261_123);
const RUNS = Number(process.env.CAIRN_FUZZ_RUNS ?? 10_200);
const HTTP_RUNS = Number(process.env.CAIRN_FUZZ_HTTP_RUNS ?? 500);
const BATCH = 200;
const STALL_SECONDS = 3;
const LEASE_SECONDS = 2;
const CALL_TIMEOUT_MS = 20_000;

/** Each batch's own seed, derived from SEED (SEED + batch would let two seeds share batches). */
const batchSeed = (batch: number) =>
  Math.imul(SEED ^ 0x5bd1e995, 31) ^ Math.imul(batch + 1, 0x9e3779b1);

type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
};
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type ListedTool = { name: string; inputSchema: JsonSchema; outputSchema?: object };

// ---------------------------------------------------------------------------
// The ids that exist, for fuzzed calls to hit them.

type Pool = {
  /** The fuzzing tenant's plans and steps, and a few of the other tenant's. */
  plans: string[];
  foreignPlans: string[];
  steps: { id: string; planId: string; tool: string | null }[];
  foreignSteps: string[];
  reviews: { id: string; planId: string; stepId: string; digest: string }[];
  artifacts: string[];
  executions: string[];
};

async function loadPool(db: DatabaseHandle["db"], tenantId: string): Promise<Pool> {
  const plans = await readRows<{ id: string; tenant_id: string }>(
    db,
    sql`select id::text, tenant_id::text from research_plan order by created_at`,
  );
  const steps = await readRows<{ id: string; plan_id: string; tool: string | null; t: string }>(
    db,
    sql`select id::text, plan_id::text, tool, tenant_id::text as t from plan_step order by created_at, step_order`,
  );
  const reviews = await readRows<{
    id: string;
    plan_id: string;
    step_id: string;
    content_digest: string;
  }>(
    db,
    sql`select id::text, plan_id::text, step_id::text, content_digest from review_request where tenant_id = ${tenantId} order by created_at`,
  );
  const artifacts = await readRows<{ id: string }>(
    db,
    sql`select id::text from research_artifact order by created_at`,
  );
  const executions = await readRows<{ id: string }>(
    db,
    sql`select id::text from skill_execution order by created_at`,
  );
  // The newest 300 plans of the tenant: enough to hit, few enough to hit often.
  const own = plans.filter((p) => p.tenant_id === tenantId).map((p) => p.id);
  const recent = new Set(own.slice(-300));
  return {
    plans: [...recent],
    foreignPlans: plans.filter((p) => p.tenant_id !== tenantId).map((p) => p.id),
    steps: steps
      .filter((s) => recent.has(s.plan_id))
      .map((s) => ({ id: s.id, planId: s.plan_id, tool: s.tool })),
    foreignSteps: steps.filter((s) => s.t !== tenantId).map((s) => s.id),
    reviews: reviews.map((r) => ({
      id: r.id,
      planId: r.plan_id,
      stepId: r.step_id,
      digest: r.content_digest,
    })),
    artifacts: artifacts.map((a) => a.id),
    executions: executions.map((e) => e.id),
  };
}

// ---------------------------------------------------------------------------
// Inputs from a JSON Schema.

const pick = <T>(items: readonly T[]) =>
  items.length === 0 ? fc.constant(undefined) : fc.constantFrom(...items);

const MALFORMED_IDS = [
  "",
  "not-a-uuid",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "123e4567-e89b-12d3-a456-42661417400",
  "' OR '1'='1",
  "{{steps.1.result.id}}",
];

const WEIRD_TEXT = [
  "\u0000",
  "nul\u0000inside",
  "\ud800",
  "lone \udfff low",
  "\u202e\u2066rtl\u2069",
  "e\u0301\u0301\u0301",
  "🧪🏔️👩🏽‍🔬",
  "\u2028\u2029",
  "\ufeff\ufffe\uffff",
  "   ",
  "\t\n\r",
  "<script>alert(1)</script>",
  "'; drop table research_plan; --",
  "$1 $$ \\x00 %s %n",
  "null",
  "__proto__",
  "{{plan.researchQuestion}}",
  "{{steps.1.result.__proto__.polluted}}",
];

const unicodeString = (maxLength: number) =>
  fc.oneof(
    { arbitrary: fc.string({ maxLength, unit: "grapheme" }), weight: 3 },
    { arbitrary: fc.string({ maxLength, unit: "binary" }), weight: 2 },
    { arbitrary: fc.constantFrom(...WEIRD_TEXT), weight: 2 },
    {
      // Lone surrogates and control characters.
      arbitrary: fc.string({
        maxLength,
        unit: fc.oneof(
          fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
          fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
        ),
      }),
      weight: 1,
    },
  );

const smallJson: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;
const jsonObject = fc.dictionary(fc.string({ maxLength: 10 }), smallJson, { maxKeys: 5 });

/** Realistic values for some fields, so that fuzzed calls get past validation and into the loop. */
function hints(pool: Pool): Record<string, fc.Arbitrary<unknown>> {
  const binding = fc.constantFrom(
    "{{plan.researchQuestion}}",
    "{{steps.1.result}}",
    "{{steps.1.result.results}}",
    "{{steps.1.result.score}}",
    "{{steps.2.result.items.0}}",
    "{{steps.99.result.x}}",
    "{{steps.1.result.__proto__}}",
    "{{steps.1.result.constructor.name}}",
    "text with {{steps.1.result.score}} inside",
    "{{steps.0.result}}",
    "{{steps.-1.result}}",
  );
  const jsonSchemas = fc.constantFrom<Record<string, unknown>>(
    { type: "object" },
    { type: "object", required: ["verdict"], properties: { verdict: { type: "string" } } },
    { type: "object", properties: { score: { type: "number", minimum: 0 } } },
    { type: "array" },
    { type: "object", properties: { a: { type: "nonsense" } } },
    { type: "object", properties: { a: { type: "string", pattern: "^(a+)+$" } } },
    { type: "object", patternProperties: { "^x": { type: "string" } } },
    { type: "object", properties: { a: { $ref: "#/definitions/missing" } } },
    { type: "object", properties: { a: { $ref: "https://example.com/schema.json" } } },
    { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" },
    { $schema: "http://example.com/unknown-dialect", type: "object" },
    { type: "object", properties: { __proto__: { type: "string" } } },
    { type: "object", additionalProperties: false, required: ["x"] },
  );
  return {
    conditionExpression: fc.oneof(
      fc
        .tuple(
          fc.constantFrom(
            "confidence",
            "status",
            "result.score",
            "result.ok",
            "result.gaps",
            "result.dead",
            "result.a.b",
            "result.list.0",
            "result.__proto__",
            "result.constructor",
          ),
          fc.constantFrom("===", "!==", ">=", "<=", ">", "<", "==", "=>"),
          fc.constantFrom("0.5", "1", "5", '"completed"', "true", "false", '"90"', ".5", "1e999"),
        )
        .map(([path, op, literal]) => `${path} ${op} ${literal}`),
      fc.string({ maxLength: 30 }),
    ),
    afterStepOrder: fc.integer({ min: 0, max: 7 }),
    targetStepOrder: fc.integer({ min: -1, max: 8 }),
    insertAfterOrder: fc.integer({ min: -1, max: 8 }),
    actionParams: fc.record(
      {
        targetStepOrder: fc.integer({ min: -1, max: 8 }),
        reason: fc.string({ maxLength: 20 }),
        why: fc.string({ maxLength: 20 }),
      },
      { requiredKeys: [] },
    ),
    ifTrueAction: fc.constantFrom("skip_to", "add_steps", "fail", "continue"),
    tool: fc.constantFrom("search_sources", "extract_data", "store_research", "get_next_step", ""),
    arguments: fc.oneof(
      fc.record({ query: binding, limit: fc.integer({ min: 0, max: 60 }) }, { requiredKeys: [] }),
      fc.record(
        {
          artifactType: fc.constantFrom("finding", "Bad Type"),
          title: binding,
          content: fc.oneof(jsonObject, fc.record({ found: binding })),
          contentText: binding,
          confidence: fc.double({ min: -1, max: 2, noNaN: true }),
        },
        { requiredKeys: [] },
      ),
      fc.record({ schema: jsonSchemas, text: binding }, { requiredKeys: [] }),
      jsonObject,
    ),
    inputs: fc.oneof(
      fc.dictionary(fc.string({ maxLength: 8 }), binding, { maxKeys: 3 }),
      jsonObject,
    ),
    outputSchema: jsonSchemas,
    schema: jsonSchemas,
    result: fc.oneof(
      fc.record(
        {
          score: fc.oneof(fc.double({ noNaN: true }), fc.constantFrom("90", " 7 ", "abc")),
          ok: fc.boolean(),
          gaps: fc.boolean(),
          dead: fc.boolean(),
          verdict: fc.string({ maxLength: 10 }),
          results: fc.array(jsonObject, { maxLength: 2 }),
          items: fc.array(smallJson, { maxLength: 3 }),
        },
        { requiredKeys: [] },
      ),
      jsonObject,
    ),
    stepExecutionReport: fc.oneof(
      fc.constant(report),
      fc.record({
        thinking: fc.string({ maxLength: 40 }),
        webSearches: fc.array(smallJson, { maxLength: 2 }),
        webFetches: fc.array(smallJson, { maxLength: 2 }),
        otherToolCalls: fc.array(smallJson, { maxLength: 2 }),
        subagents: fc.array(smallJson, { maxLength: 2 }),
      }),
    ),
    query: fc.constantFrom(
      "heat pump",
      "heat pumps cold climate",
      '"heat pump" -gas or boiler',
      "recyling",
      "!!!",
      "a & b | c",
      ":*",
      "'",
      "\\",
      "-",
      "or",
      "((((",
    ),
    since: fc.oneof(
      fc
        .date({ min: new Date("1900-01-01"), max: new Date("2200-01-01"), noInvalidDate: true })
        .map((d) => d.toISOString()),
      fc.constantFrom(
        "2026-01-31",
        "2026-02-30",
        "0000-01-01",
        "yesterday",
        "2026-01-31T25:00:00Z",
      ),
    ),
    sourceUrls: fc.array(
      fc.oneof(
        fc.webUrl(),
        fc.constantFrom("javascript:alert(1)", "ftp://x", "http://", "https://例え.テスト/ä"),
      ),
      { maxLength: 3 },
    ),
    // Evidence that holds (claims that cite nothing are unsupported, not wrong),
    // so add_step_evidence gets past validation whenever its step is completed.
    evidence: fc.record(
      {
        sources: fc.array(fc.record({ url: sourceSpelling }), { maxLength: 2 }),
        claims: fc.array(fc.record({ text: fc.lorem({ maxCount: 5 }) }), {
          minLength: 1,
          maxLength: 2,
        }),
      },
      { requiredKeys: ["claims"] },
    ),
    // Mostly left out (JSON drops undefined): extract_data's completesStep is
    // optional, and a call that carries one rarely names a step it may complete,
    // so without this the tool seldom runs on its own (cohere still sets real ones).
    completesStep: fc.constant(undefined),
    url: sourceSpelling,
    source: sourceSpelling,
    artifactIds: fc.array(pick(pool.artifacts), { minLength: 1, maxLength: 3 }),
    decision: fc.constantFrom("approve", "reject", "modify", "skip"),
  };
}

/**
 * A page, DOI or arXiv id in several spellings of three sources, so a claim
 * often cites one its change read (the plain strings the schema adds are none).
 */
const sourceSpelling = fc.constantFrom(
  "https://example.org/a?utm_source=x",
  "http://EXAMPLE.org/a/#top",
  "doi:10.1000/XYZ",
  "https://doi.org/10.1000/xyz",
  "arXiv:2101.01234v2",
  "https://arxiv.org/abs/2101.01234",
);

/** An id for a uuid field: mostly one that exists, sometimes another tenant's, an unknown or a malformed one. */
function idFor(name: string, pool: Pool): fc.Arbitrary<unknown> {
  const known: readonly string[] =
    name === "stepId" || name === "stepIds" || name === "fromStepId"
      ? pool.steps.map((s) => s.id)
      : name === "reviewRequestId"
        ? pool.reviews.map((r) => r.id)
        : name === "executionId"
          ? pool.executions
          : name === "artifactIds" || name === "artifactId"
            ? pool.artifacts
            : pool.plans;
  const foreign = name === "stepId" ? pool.foreignSteps : pool.foreignPlans;
  return fc.oneof(
    { arbitrary: pick(known), weight: 8 },
    { arbitrary: pick(foreign), weight: 1 },
    { arbitrary: fc.uuid(), weight: 1 },
    { arbitrary: fc.constantFrom(...MALFORMED_IDS), weight: 1 },
  );
}

/** What a schema's values are built with: the ids that exist, the hints, and whether to leave optional fields out. */
type Gen = { pool: Pool; hinted: Record<string, fc.Arbitrary<unknown>>; minimal: boolean };

function stringFor(schema: JsonSchema, name: string, gen: Gen): fc.Arbitrary<unknown> {
  if (schema.format === "uuid") return idFor(name, gen.pool);
  if (schema.format === "date-time" || schema.format === "date") {
    return fc
      .date({ min: new Date("1970-01-01"), max: new Date("2100-01-01"), noInvalidDate: true })
      .map((d) => (schema.format === "date" ? d.toISOString().slice(0, 10) : d.toISOString()));
  }
  if (schema.format === "uri") return fc.webUrl();
  const maxLength = Math.min(schema.maxLength ?? 60, 60);
  const minLength = Math.min(schema.minLength ?? 0, maxLength);
  const plain = fc.string({ minLength, maxLength });
  if (schema.pattern) {
    return fc.oneof({ arbitrary: fc.stringMatching(new RegExp(schema.pattern)), weight: 3 }, plain);
  }
  const words = fc.lorem({ maxCount: 6 }).filter((s) => s.length >= Math.max(minLength, 1));
  if (gen.minimal) return words;
  return fc.oneof(
    { arbitrary: words, weight: 3 },
    { arbitrary: plain, weight: 2 },
    { arbitrary: unicodeString(maxLength), weight: 1 },
  );
}

function fromSchema(schema: JsonSchema, name: string, gen: Gen): fc.Arbitrary<unknown> {
  const hint = gen.hinted[name];
  const plain = plainFromSchema(schema, name, gen);
  return hint ? fc.oneof({ arbitrary: hint, weight: 3 }, { arbitrary: plain, weight: 1 }) : plain;
}

function plainFromSchema(schema: JsonSchema, name: string, gen: Gen): fc.Arbitrary<unknown> {
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => fromSchema(s, name, gen)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case "string":
      return stringFor(schema, name, gen);
    case "integer":
      return fc.integer({
        min: Math.max(schema.minimum ?? -1_000, -2_147_483_648),
        max: Math.min(schema.maximum ?? 1_000, 2_147_483_647),
      });
    case "number":
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case "boolean":
      return fc.boolean();
    case "array": {
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? 4, 4));
      const item = schema.items ? fromSchema(schema.items, name, gen) : smallJson;
      return fc.array(item, { minLength, maxLength });
    }
    case "object": {
      if (!schema.properties || Object.keys(schema.properties).length === 0) return jsonObject;
      const required = schema.required ?? [];
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, property] of Object.entries(schema.properties)) {
        if (gen.minimal && !required.includes(key)) continue;
        model[key] = fromSchema(property, key, gen);
      }
      return fc.record(model, { requiredKeys: required });
    }
    default:
      return smallJson;
  }
}

// ---------------------------------------------------------------------------
// Coherent ids and mutations.

type Args = Record<string, unknown>;

/** Sets planId / stepId / fromStepId / stepIds / reviewRequestId (with its contentDigest) / completesStep to ids of one real plan. */
function cohere(args: Args, choice: number[], pool: Pool, schema: JsonSchema): Args {
  const properties = schema.properties ?? {};
  const [which = 0, a = 0, b = 0, c = 0] = choice;
  const out = { ...args };
  if (which % 3 === 0 && properties.reviewRequestId && pool.reviews.length > 0) {
    const review = pool.reviews[a % pool.reviews.length];
    if (review) {
      out.planId = review.planId;
      if (b % 2 === 0) {
        out.reviewRequestId = review.id;
        // The digest of what that review showed, as a reviewer's decision carries it.
        if (properties.contentDigest) out.contentDigest = review.digest;
      }
      if (c % 3 === 0) out.stepId = review.stepId;
    }
    return out;
  }
  // One of the newest plans: the seeds of this batch and the plans fuzzed calls created.
  const plan =
    pool.plans[pool.plans.length - 1 - (a % Math.max(Math.min(pool.plans.length, 40), 1))];
  if (!plan) return out;
  const steps = pool.steps.filter((s) => s.planId === plan);
  if ("planId" in properties) out.planId = plan;
  const step = steps[b % Math.max(steps.length, 1)];
  if (step && ("stepId" in properties || "stepId" in out)) out.stepId = step.id;
  // fork_plan's step of that plan (a fork from its first step needs none finished before it).
  if ("fromStepId" in properties) out.fromStepId = (c % 2 === 0 ? steps[0] : step)?.id;
  if ("stepIds" in properties && steps.length > 0) {
    const ids = steps.map((s) => s.id);
    // A rotation, sometimes missing one, sometimes with one twice.
    const rotated = [...ids.slice(c % ids.length), ...ids.slice(0, c % ids.length)];
    out.stepIds = c % 5 === 0 ? rotated.slice(1) : c % 7 === 0 ? [...rotated, rotated[0]] : rotated;
  }
  if ("completesStep" in properties && which % 2 === 1) {
    const server = pool.steps.filter((s) => s.tool !== null);
    const target = server[c % Math.max(server.length, 1)];
    if (target) out.completesStep = { planId: target.planId, stepId: target.id };
  }
  return out;
}

/** Every path to a value in a JSON value, objects and arrays alike (the root is []). */
function paths(value: unknown, prefix: (string | number)[] = [], into: (string | number)[][] = []) {
  into.push(prefix);
  if (prefix.length > 6) return into;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) paths(item, [...prefix, i], into);
  } else if (value && typeof value === "object") {
    for (const key of Object.keys(value)) paths((value as Args)[key], [...prefix, key], into);
  }
  return into;
}

/** Sets an own property, even one named __proto__ (which `=` would treat as the prototype). */
function setOwn(target: object, key: string | number, value: unknown) {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function setAt(root: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  let parent = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  setOwn(parent, path[path.length - 1] as string | number, value);
  return root;
}

function deleteAt(root: unknown, path: (string | number)[]) {
  if (path.length === 0) return;
  let parent = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete parent[last];
}

type Mutation =
  | { kind: "none" }
  | { kind: "drop"; at: number }
  | { kind: "retype"; at: number; value: unknown }
  | { kind: "extra"; at: number; key: string; value: unknown }
  | { kind: "huge"; at: number; length: number; unit: string }
  | { kind: "deep"; at: number; depth: number; shape: number }
  | { kind: "bulky"; at: number; bytes: number }
  | { kind: "unicode"; at: number; text: string }
  | { kind: "not_object"; value: unknown };

const PROTOTYPE_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
];

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.constant({ kind: "none" as const }), weight: 10 },
  { arbitrary: fc.record({ kind: fc.constant("drop" as const), at: fc.nat() }), weight: 3 },
  {
    arbitrary: fc.record({
      kind: fc.constant("retype" as const),
      at: fc.nat(),
      value: fc.oneof(
        fc.integer(),
        fc.double(),
        fc.boolean(),
        fc.constant(null),
        fc.string({ maxLength: 10 }),
        fc.array(smallJson, { maxLength: 2 }),
        jsonObject,
        fc.constantFrom(-0, 1e308, -1e308, 2 ** 53 + 1, 0.1 + 0.2),
      ),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("extra" as const),
      at: fc.nat(),
      key: fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 12 })),
      value: fc.oneof(
        smallJson,
        fc.constant({ polluted: true }),
        fc.constant({ prototype: { polluted: true } }),
      ),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("huge" as const),
      at: fc.nat(),
      length: fc.integer({ min: 10_000, max: 100_000 }),
      unit: fc.constantFrom("x", "é", "🧪", "heat pump ", "\u0000", "\ud800", "\\"),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("deep" as const),
      at: fc.nat(),
      depth: fc.oneof(fc.integer({ min: 20, max: 3_000 }), fc.integer({ min: 3_000, max: 20_000 })),
      shape: fc.nat(),
    }),
    weight: 1,
  },
  {
    // A JSON value past its field's size limit (a proposal, a result, a step's
    // arguments), made of short strings so that only the size limit can refuse it.
    arbitrary: fc.record({
      kind: fc.constant("bulky" as const),
      at: fc.nat(),
      bytes: fc.integer({ min: 70_000, max: 400_000 }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("unicode" as const),
      at: fc.nat(),
      text: unicodeString(40),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("not_object" as const),
      value: fc.oneof(
        fc.constant(null),
        fc.array(smallJson, { maxLength: 2 }),
        fc.string({ maxLength: 5 }),
        fc.integer(),
        fc.boolean(),
      ),
    }),
    weight: 1,
  },
);

/** Applies a mutation to a (deep-copied) argument object; returns the JSON text a client would send. */
function mutate(args: Args, m: Mutation): string {
  const root = JSON.parse(JSON.stringify(args)) as unknown;
  const all = paths(root);
  const nonRoot = all.filter((p) => p.length > 0);
  const objects = all.filter((p) => {
    let value: unknown = root;
    for (const key of p) value = (value as Record<string | number, unknown>)[key];
    return value !== null && typeof value === "object" && !Array.isArray(value);
  });
  let out: unknown = root;
  switch (m.kind) {
    case "none":
      break;
    case "drop":
      if (nonRoot.length > 0) deleteAt(root, nonRoot[m.at % nonRoot.length] as (string | number)[]);
      break;
    case "retype":
      if (nonRoot.length > 0) out = setAt(root, nonRoot[m.at % nonRoot.length] ?? [], m.value);
      break;
    case "extra": {
      const at = objects[m.at % objects.length] ?? [];
      let target: unknown = root;
      for (const key of at) target = (target as Record<string | number, unknown>)[key];
      setOwn(target as object, m.key, m.value);
      break;
    }
    case "huge": {
      const text = m.unit.repeat(Math.ceil(m.length / m.unit.length)).slice(0, m.length);
      if (nonRoot.length > 0) out = setAt(root, nonRoot[m.at % nonRoot.length] ?? [], text);
      else setOwn(root as object, "padding", text);
      break;
    }
    case "deep": {
      // Spliced in as text: JSON.stringify itself overflows a few thousand levels down.
      const marker = "\u0001deep\u0001";
      if (nonRoot.length > 0) out = setAt(root, nonRoot[m.at % nonRoot.length] ?? [], marker);
      else setOwn(root as object, "deep", marker);
      const [open, close] = m.shape % 2 === 0 ? ["[", "]"] : ['{"a":', "}"];
      return JSON.stringify(out).replace(
        JSON.stringify(marker),
        `${open.repeat(m.depth)}"leaf"${close.repeat(m.depth)}`,
      );
    }
    case "bulky": {
      const containers = nonRoot.filter((p) => {
        let value: unknown = root;
        for (const key of p) value = (value as Record<string | number, unknown>)[key];
        return value !== null && typeof value === "object";
      });
      const items = Array.from(
        { length: Math.ceil(m.bytes / 36) },
        (_, i) => `item ${i} of a bulky value`,
      );
      const at = containers[m.at % Math.max(containers.length, 1)];
      if (!at) setOwn(root as object, "bulky", items);
      else {
        let value: unknown = root;
        for (const key of at) value = (value as Record<string | number, unknown>)[key];
        out = setAt(
          root,
          at,
          Array.isArray(value)
            ? items
            : Object.fromEntries(items.map((item, i) => [`k${i}`, item])),
        );
      }
      break;
    }
    case "unicode": {
      const strings = nonRoot.filter((p) => {
        let value: unknown = root;
        for (const key of p) value = (value as Record<string | number, unknown>)[key];
        return typeof value === "string";
      });
      if (strings.length > 0) out = setAt(root, strings[m.at % strings.length] ?? [], m.text);
      else setOwn(root as object, m.text || "empty", m.text);
      break;
    }
    case "not_object":
      out = m.value;
      break;
  }
  return JSON.stringify(out);
}

type Case = { tool: string; json: string; mutation: Mutation["kind"] };

function caseArbitrary(tools: ListedTool[], pool: Pool): fc.Arbitrary<Case> {
  const hinted = hints(pool);
  return fc.oneof(
    ...tools.map((tool) =>
      fc
        .tuple(
          // Half with every field the schema has, half with the required ones
          // only: those get past validation far more often, into the use cases.
          fc.oneof(
            fromSchema(tool.inputSchema, "", { pool, hinted, minimal: false }),
            fromSchema(tool.inputSchema, "", { pool, hinted, minimal: true }),
          ) as fc.Arbitrary<Args>,
          fc.option(fc.array(fc.nat(), { minLength: 4, maxLength: 4 }), { freq: 2 }),
          mutation,
        )
        .map(([args, choice, m]) => {
          const coherent = choice ? cohere(args, choice, pool, tool.inputSchema) : args;
          return { tool: tool.name, json: mutate(coherent, m), mutation: m.kind };
        }),
    ),
  );
}

// ---------------------------------------------------------------------------
// Invariants.

type Problem = { kind: string; tool: string; detail: string; input: string };

const TERMINAL: StepStatus[] = ["completed", "skipped", "failed"];

/** Checks the given plans (all when undefined), in four queries whatever their number; returns their problems. */
async function planProblems(db: DatabaseHandle["db"], planIds?: string[]): Promise<string[]> {
  if (planIds?.length === 0) return [];
  const only = (column: string) =>
    planIds
      ? sql`where ${sql.identifier(column)} in (${sql.join(
          planIds.map((id) => sql`${id}::uuid`),
          sql`, `,
        )})`
      : sql``;
  const plans = await readRows<{ id: string; status: string }>(
    db,
    sql`select id::text, status::text from research_plan ${only("id")}`,
  );
  const steps = await readRows<{ id: string; plan_id: string; status: StepStatus }>(
    db,
    sql`select id::text, plan_id::text, status::text from plan_step ${only("plan_id")}`,
  );
  const audit = await readRows<{
    plan_id: string;
    event_type: string;
    step_id: string | null;
    payload: Record<string, unknown>;
  }>(
    db,
    sql`select plan_id::text, event_type::text, step_id::text, payload from plan_audit_log
        ${only("plan_id")} order by seq`,
  );
  const openReviews = await readRows<{ plan_id: string }>(
    db,
    sql`select plan_id::text from review_request ${only("plan_id")}
        ${planIds ? sql`and` : sql`where`} status = 'pending'`,
  );
  const group = <T extends { plan_id: string | null }>(rows: T[]) => {
    const byPlan = new Map<string, T[]>();
    for (const row of rows) {
      if (row.plan_id === null) continue;
      const list = byPlan.get(row.plan_id) ?? [];
      list.push(row);
      byPlan.set(row.plan_id, list);
    }
    return byPlan;
  };
  const stepsOf = group(steps);
  const auditOf = group(audit);
  const open = new Set(openReviews.map((r) => r.plan_id));
  const problems: string[] = [];
  for (const plan of plans) {
    const planSteps = stepsOf.get(plan.id) ?? [];
    const rows = (auditOf.get(plan.id) ?? []).map((r) => ({
      eventType: r.event_type,
      stepId: r.step_id,
      payload: r.payload,
    }));
    for (const problem of replayAudit(planSteps, rows))
      problems.push(`plan ${plan.id}: ${problem}`);
    if (plan.status === "completed" && !planSteps.every((s) => TERMINAL.includes(s.status))) {
      problems.push(
        `plan ${plan.id} is completed with steps ${planSteps.map((s) => s.status).join(",")}`,
      );
    }
    if (
      plan.status === "awaiting_review" &&
      !planSteps.some((s) => s.status === "awaiting_input")
    ) {
      problems.push(`plan ${plan.id} awaits review with no step awaiting input`);
    }
    if (
      (plan.status === "completed" || plan.status === "failed" || plan.status === "cancelled") &&
      open.has(plan.id)
    ) {
      problems.push(`plan ${plan.id} is ${plan.status} with an open review`);
    }
  }
  return problems;
}

/** The next transaction id (xid8): it moves only when a transaction wrote, or began to. */
async function nextXid(db: DatabaseHandle["db"]): Promise<bigint> {
  const [row] = await readRows<{ x: string }>(
    db,
    sql`select pg_snapshot_xmax(pg_current_snapshot())::text as x`,
  );
  return BigInt(row?.x ?? "0");
}

const WRITABLE_TABLES = [
  "tenant",
  "app_user",
  "api_key",
  "skill_execution",
  "research_plan",
  "plan_step",
  "plan_branching_condition",
  "plan_audit_log",
  "review_request",
  "review_decision",
  "research_artifact",
  "research_output",
  "research_feedback",
  "mcp_tool_call_log",
];

/**
 * The tables with rows that a transaction from `from` up to (not including) `to`
 * inserted or updated and committed. Only this test uses its database, so those
 * are the transactions of the call that ran in between. (A transaction that only
 * locked rows, SELECT ... FOR UPDATE, also takes an id and commits, but leaves
 * no row with its id in xmin.)
 */
async function writtenBetween(db: DatabaseHandle["db"], from: bigint, to: bigint) {
  if (to <= from) return [];
  const committed = await readRows<{ x: string }>(
    db,
    sql`select x::text from generate_series(${from.toString()}::bigint, ${(to - 1n).toString()}::bigint) as x
        where pg_xact_status(x::text::xid8) = 'committed'`,
  );
  if (committed.length === 0) return [];
  // xmin is the 32-bit transaction id: the low half of the xid8.
  const ids = committed.map((row) => (BigInt(row.x) & 0xffff_ffffn).toString());
  const tables: string[] = [];
  for (const table of WRITABLE_TABLES) {
    const [row] = await readRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from ${sql.identifier(table)}
          where xmin::text in (${sql.join(
            ids.map((id) => sql`${id}`),
            sql`, `,
          )})`,
    );
    if ((row?.n ?? 0) > 0) tables.push(`${table} (${row?.n})`);
  }
  return tables;
}

/** The plans a call names or returns: the ones it may have changed. */
function plansOf(args: unknown, output: unknown): string[] {
  const ids = new Set<string>();
  const take = (value: unknown) => {
    if (value && typeof value === "object") {
      const record = value as Record<string, unknown>;
      for (const key of ["planId"]) {
        const id = record[key];
        if (typeof id === "string" && /^[0-9a-f-]{36}$/i.test(id)) ids.add(id.toLowerCase());
      }
      if (record.completesStep) take(record.completesStep);
    }
  };
  take(args);
  take(output);
  return [...ids];
}

const preview = (json: string) =>
  json.length > 600 ? `${json.slice(0, 600)}… (${json.length} chars)` : json;

/** Every problem with its whole input, for a replay: test-results/fuzz-<part>.json. */
function keep(problems: Problem[], part: string) {
  if (problems.length === 0) return;
  mkdirSync("test-results", { recursive: true });
  const file = `test-results/fuzz-${part}.json`;
  writeFileSync(file, JSON.stringify({ seed: SEED, problems }, null, 2));
  console.log(`${problems.length} problems, with their whole inputs, in ${file}`);
}

function summarise(problems: Problem[]): string[] {
  const groups = new Map<string, { count: number; first: Problem }>();
  for (const problem of problems) {
    const key = `${problem.kind} ${problem.tool}: ${problem.detail.replace(/[0-9a-f-]{36}/g, "<id>").slice(0, 200)}`;
    const group = groups.get(key);
    if (group) group.count += 1;
    else groups.set(key, { count: 1, first: problem });
  }
  return [...groups].map(
    ([key, { count, first }]) => `${count}× ${key}\n    e.g. input ${preview(first.input)}`,
  );
}

/** An error's message, and its cause's (drizzle wraps a database error in "Failed query: <sql>"). */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` <- ${error.cause.message}` : "";
  const message = error.message.startsWith("Failed query:")
    ? `Failed query: ${error.message.slice(13, 80).replace(/\s+/g, " ")}…`
    : error.message;
  // Where an unexpected error came from: the first frames of Cairn's own code.
  const frames = (error.stack ?? "")
    .split("\n")
    .filter((line) => line.includes("/lib/"))
    .slice(0, 4)
    .map((line) => line.trim().replace(/^at /, ""));
  const where = isAppError(error) || frames.length === 0 ? "" : ` at ${frames.join(" < ")}`;
  return `${error.name}: ${message}${cause}${where}`;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms).unref(),
    ),
  ]);
}

// ---------------------------------------------------------------------------
// Seeding: plans in every state, through the tools themselves.

type Call = (tool: string, args: Args) => Promise<Args>;

const steps = (...types: string[]) =>
  types.map((stepType, i) => ({ stepType, instructions: `Step ${i + 1}: ${stepType}.` }));

async function seedPlans(call: Call, label: string) {
  const submit = (planId: unknown, stepId: unknown, result: Args = { ok: true }) =>
    call("submit_step_result", { planId, stepId, result, stepExecutionReport: report });
  const create = (name: string, body: Args) =>
    call("create_research_plan", {
      name: `${label} ${name}`,
      researchQuestion: "Do heat pumps work in the cold?",
      ...body,
    });
  const next = (planId: unknown) => call("get_next_step", { planId });

  const session = `${label}-session`;
  await call("log_skill_execution", {
    skillName: "research",
    status: "started",
    sessionId: session,
    metadata: {
      topic: "Heat pumps",
      researchType: "general_topic",
      scope: "Europe",
      depthSignals: [],
      skipQuestionsReason: "Clear.",
      routingRationale: "Scan.",
      delegatedTo: "scan",
      originalQuery: "Heat pumps?",
    },
  });
  // Planning, with conditions of every kind.
  await create("planning", {
    sessionId: session,
    steps: steps("search", "analyze", "synthesize"),
    branchingConditions: [
      {
        afterStepOrder: 1,
        conditionExpression: "result.score >= 5",
        ifTrueAction: "skip_to",
        actionParams: { targetStepOrder: 3 },
      },
      { afterStepOrder: 2, conditionExpression: "result.gaps === true", ifTrueAction: "add_steps" },
      {
        afterStepOrder: 2,
        conditionExpression: "result.dead === true",
        ifTrueAction: "fail",
        actionParams: { reason: "Dead end." },
      },
    ],
  });
  // Executing: step 1 completed, step 2 in progress.
  const executing = await create("executing", {
    steps: steps("search", "analyze", "critique", "synthesize"),
    branchingConditions: [
      {
        afterStepOrder: 2,
        conditionExpression: "confidence > 0.8",
        ifTrueAction: "skip_to",
        actionParams: { targetStepOrder: 4 },
      },
    ],
  });
  const one = (await next(executing.planId)) as { step: { stepId: string } };
  await submit(executing.planId, one.step.stepId, { score: 3 });
  const two = (await next(executing.planId)) as { step: { stepId: string } };
  await call("store_research", {
    artifactType: "finding",
    title: `${label} heat pump efficiency in cold climates`,
    content: { cop: 2.5 },
    contentText: "Heat pumps keep a COP above 2 at minus 15 degrees.",
    confidence: 0.8,
    sourceUrls: ["https://example.org/cop"],
    planId: executing.planId,
    stepId: two.step.stepId,
  });
  // Awaiting review.
  const reviewed = await create("awaiting review", { steps: steps("checkpoint", "search") });
  const check = (await next(reviewed.planId)) as { step: { stepId: string } };
  await call("request_user_review", {
    planId: reviewed.planId,
    stepId: check.step.stepId,
    summary: "Go on?",
  });
  // Completed, with a deliverable and feedback.
  const done = await create("completed", { steps: steps("search") });
  const only = (await next(done.planId)) as { step: { stepId: string } };
  await submit(done.planId, only.step.stepId);
  await call("store_research_output", {
    planId: done.planId,
    outputMediaType: "chat_answer",
    content: "Yes.",
  });
  await call("submit_research_feedback", {
    planId: done.planId,
    feedbackType: "initial",
    satisfaction: 4,
    summary: "Good.",
    followUpRequested: false,
  });
  // Failed by a reviewer.
  const failed = await create("failed", { steps: steps("checkpoint", "search") });
  const doomed = (await next(failed.planId)) as { step: { stepId: string } };
  const doomedReview = (await call("request_user_review", {
    planId: failed.planId,
    stepId: doomed.step.stepId,
    summary: "Bad?",
  })) as { reviewRequestId: string };
  await call("submit_user_decision", {
    planId: failed.planId,
    reviewRequestId: doomedReview.reviewRequestId,
    decision: "reject",
    feedback: "Wrong direction.",
  });
  // Paused on a server step whose binding cannot be resolved.
  const paused = await create("paused", {
    steps: [
      { stepType: "search", instructions: "Find sources." },
      {
        stepType: "search",
        instructions: "Library check.",
        tool: "search_sources",
        arguments: { query: "{{steps.1.result.missing}}", limit: 5 },
      },
      {
        stepType: "analyze",
        instructions: "Weigh them.",
        inputs: { library: "{{steps.2.result.results}}" },
        outputSchema: {
          type: "object",
          required: ["verdict"],
          properties: { verdict: { type: "string" } },
        },
      },
    ],
  });
  const first = (await next(paused.planId)) as { step: { stepId: string } };
  await submit(paused.planId, first.step.stepId, { found: 2 });
  await next(paused.planId);
  // Waiting for steps after add_steps fired on its last step.
  const waiting = await create("awaiting steps", {
    steps: steps("search"),
    branchingConditions: [
      { afterStepOrder: 1, conditionExpression: "result.gaps === true", ifTrueAction: "add_steps" },
    ],
  });
  const last = (await next(waiting.planId)) as { step: { stepId: string } };
  await submit(waiting.planId, last.step.stepId, { gaps: true });
  // Server steps that run (search, then store) before an agent step.
  await create("server steps", {
    steps: [
      {
        stepType: "search",
        instructions: "Library.",
        tool: "search_sources",
        arguments: { query: "{{plan.researchQuestion}}", limit: 3 },
      },
      {
        stepType: "custom",
        instructions: "Keep it.",
        tool: "store_research",
        arguments: {
          artifactType: "analysis",
          title: "Library hits",
          content: { hits: "{{steps.1.result.results}}" },
          contentText: "Hits: {{steps.1.result.results}}",
          confidence: 0.5,
        },
      },
      {
        stepType: "synthesize",
        instructions: "Write.",
        inputs: { stored: "{{steps.2.result.artifactId}}" },
      },
    ],
  });
}

// ---------------------------------------------------------------------------

describe("fuzzing every MCP tool", () => {
  let model: StubModel;
  let app: AppServer;
  let agent: Agent;
  let listed: ListedTool[];

  beforeAll(async () => {
    console.log(`fuzz seed ${SEED}: rerun with CAIRN_FUZZ_SEED=${SEED}`);
    model = await startStubModel();
    app = await startAppServer("postgres", {
      stallThresholdSeconds: STALL_SECONDS,
      env: {
        CAIRN_STEP_LEASE_SECONDS: String(LEASE_SECONDS),
        CAIRN_LLM_BASE_URL: model.baseUrl,
        CAIRN_LLM_MODEL: "stub",
      },
    });
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    listed = (await agent.client.listTools()).tools as unknown as ListedTool[];
  });
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
    await model?.stop();
  });

  it("builds its inputs from the schemas of all the tools tools/list serves", () => {
    expect(listed.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    for (const tool of listed) expect(tool.inputSchema.type, tool.name).toBe("object");
  });

  it(`runs ${RUNS} generated calls in process: expected errors only, no partial write, invariants hold`, async () => {
    const handle = await freshDatabase("pglite");
    const started = Date.now();
    try {
      const tenant = (name: string) =>
        tenantContext(handle.db, name, {
          stallThresholdSeconds: STALL_SECONDS,
          stepLeaseSeconds: LEASE_SECONDS,
          llm: { baseUrl: model.baseUrl, model: "stub" },
        });
      const fuzzer = await tenant("fuzz");
      const other = await tenant("other");
      const byName = new Map<string, ToolDefinition>(
        TOOLS.map((t) => [t.name, t as ToolDefinition]),
      );
      const callWith =
        (ctx: ServiceContext): Call =>
        async (tool, args) =>
          (await byName.get(tool)?.run(ctx, args)) as Args;
      await seedPlans(callWith(fuzzer), "Fuzz");
      await seedPlans(callWith(other), "Other");

      const problems: Problem[] = [];
      const counts = { ok: 0, expected: 0, rejected: 0 };
      /** Calls refused by a field's JSON size limit (the bulky mutation's aim). */
      let sizeRefusals = 0;
      const codes = new Map<string, number>();
      /** Per tool: calls run, and calls that succeeded. */
      const perTool = new Map(listed.map((t) => [t.name, { run: 0, ok: 0 }]));
      let xid = await nextXid(handle.db);

      for (let batch = 0; batch * BATCH < RUNS; batch += 1) {
        // Fresh plans in every state for each batch, as the fuzzed calls end the older ones.
        if (batch > 0) {
          await seedPlans(callWith(fuzzer), `Fuzz ${batch}`);
          xid = await nextXid(handle.db);
        }
        const pool = await loadPool(handle.db, fuzzer.tenantId);
        const cases = fc.sample(caseArbitrary(listed, pool), {
          seed: batchSeed(batch),
          numRuns: Math.min(BATCH, RUNS - batch * BATCH),
        });
        for (const c of cases) {
          const tool = byName.get(c.tool) as ToolDefinition;
          const args = JSON.parse(c.json) as unknown;
          // The SDK refuses arguments that are not a JSON object before any handler runs.
          if (args === null || typeof args !== "object" || Array.isArray(args)) {
            counts.rejected += 1;
            continue;
          }
          const tally = perTool.get(c.tool) as { run: number; ok: number };
          tally.run += 1;
          let failed = false;
          let output: unknown;
          try {
            output = await withTimeout(tool.run(fuzzer, args), CALL_TIMEOUT_MS);
            counts.ok += 1;
            tally.ok += 1;
            const checked = tool.outputSchema.safeParse(JSON.parse(JSON.stringify(output)));
            if (!checked.success) {
              problems.push({
                kind: "output does not fit the output schema",
                tool: c.tool,
                detail: checked.error.issues
                  .map((i) => `${i.path.join(".")}: ${i.message}`)
                  .join("; "),
                input: c.json,
              });
            }
          } catch (error) {
            failed = true;
            if (isAppError(error) && error.code !== "INTERNAL_ERROR") {
              counts.expected += 1;
              codes.set(error.code, (codes.get(error.code) ?? 0) + 1);
              if (error.message.includes("as JSON text, over the limit of")) sizeRefusals += 1;
            } else {
              problems.push({
                kind: isAppError(error) ? "INTERNAL_ERROR" : "unexpected exception",
                tool: c.tool,
                detail: describeError(error),
                input: c.json,
              });
            }
          }
          const before = xid;
          xid = await nextXid(handle.db);
          if (xid === before) continue;
          // The call wrote, or began to.
          if (failed) {
            const written = await writtenBetween(handle.db, before, xid);
            if (written.length > 0) {
              problems.push({
                kind: "a failed call wrote",
                tool: c.tool,
                detail: `rows in ${written.join(", ")}`,
                input: c.json,
              });
            }
          }
          for (const detail of await planProblems(handle.db, plansOf(args, output))) {
            problems.push({ kind: "invariant", tool: c.tool, detail, input: c.json });
          }
        }
        // Every plan, not only the ones the calls named: a step changed with no audit row shows here.
        if (batch % 5 === 4 || (batch + 1) * BATCH >= RUNS) {
          for (const detail of await planProblems(handle.db)) {
            problems.push({
              kind: "invariant (full check)",
              tool: "batch",
              detail,
              input: `batch ${batch}`,
            });
          }
        }
        if (problems.length > 500) break;
      }
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      console.log(
        `in process: ${counts.ok} succeeded, ${counts.expected} expected errors (${[...codes]
          .map(([code, n]) => `${code} ${n}`)
          .join(
            ", ",
          )}; ${sizeRefusals} by a size limit), ${counts.rejected} refused as not an object, in ${seconds} s`,
      );
      console.log(
        `per tool (run/succeeded): ${[...perTool].map(([name, t]) => `${name} ${t.run}/${t.ok}`).join(", ")}`,
      );
      keep(problems, "in-process");
      expect(summarise(problems)).toEqual([]);
      expect(counts.ok + counts.expected + counts.rejected).toBe(RUNS);
      expect(sizeRefusals).toBeGreaterThan(0);
      // Every tool got its share, and every one got past validation into its use case sometimes.
      for (const [name, t] of perTool) {
        expect(t.run, name).toBeGreaterThanOrEqual(RUNS / listed.length / 2);
        expect(t.ok, name).toBeGreaterThan(0);
      }
    } finally {
      await handle.close();
    }
  }, 600_000);

  it(`runs ${HTTP_RUNS} generated calls over HTTP: no 5xx, expected errors only, invariants hold`, async () => {
    const started = Date.now();
    await seedPlans(async (tool, args) => agent.ok(tool, args), "Http");
    const handle = await app.openDatabase();
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const outputs = new Map(listed.map((t) => [t.name, ajv.compile(t.outputSchema ?? {})]));
    const problems: Problem[] = [];
    const statuses = new Map<number, number>();
    const outcomes = { ok: 0, errors: 0, invalidParams: 0 };
    let id = 0;
    try {
      for (let batch = 0; batch * 50 < HTTP_RUNS; batch += 1) {
        if (batch % 2 === 1)
          await seedPlans(async (tool, args) => agent.ok(tool, args), `Http ${batch}`);
        const pool = await loadPool(handle.db, app.tenantA.tenantId);
        const cases = fc.sample(caseArbitrary(listed, pool), {
          seed: batchSeed(1_000 + batch),
          numRuns: Math.min(50, HTTP_RUNS - batch * 50),
        });
        for (const c of cases) {
          id += 1;
          const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${JSON.stringify(c.tool)},"arguments":${c.json}}}`;
          const response = await fetch(app.mcpUrl, {
            method: "POST",
            headers: {
              Authorization: `Bearer ${app.tenantA.key}`,
              "Content-Type": "application/json",
              Accept: "application/json, text/event-stream",
              "MCP-Protocol-Version": "2025-06-18",
            },
            body,
            signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
          });
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          const text = await response.text();
          const fail = (kind: string, detail: string) =>
            problems.push({ kind, tool: c.tool, detail, input: c.json });
          if (response.status >= 500) {
            fail(`HTTP ${response.status}`, text.slice(0, 300));
            continue;
          }
          // biome-ignore lint/suspicious/noExplicitAny: a JSON-RPC answer of any shape
          let answer: any;
          try {
            answer = JSON.parse(text);
          } catch {
            fail("not JSON", `HTTP ${response.status}: ${text.slice(0, 300)}`);
            continue;
          }
          if (answer.error) {
            // Arguments that are not an object, and only those, are invalid params.
            outcomes.invalidParams += 1;
            if (answer.error.code !== -32602 || c.mutation !== "not_object") {
              fail("JSON-RPC error", JSON.stringify(answer.error).slice(0, 300));
            }
            continue;
          }
          if (c.mutation === "not_object") fail("not refused", text.slice(0, 200));
          const result = answer.result;
          const first = result?.content?.[0]?.text ?? "";
          if (result?.isError) {
            outcomes.errors += 1;
            if (!/^[A-Z_]+: /.test(first) || first.startsWith("INTERNAL_ERROR"))
              fail("error result", first.slice(0, 300));
          } else {
            outcomes.ok += 1;
            const validate = outputs.get(c.tool);
            if (validate && !validate(result?.structuredContent)) {
              fail(
                "output does not fit the listed output schema",
                ajv.errorsText(validate.errors).slice(0, 300),
              );
            }
            if (JSON.stringify(result?.structuredContent) !== first)
              fail("text is not the structured content", first.slice(0, 100));
          }
        }
        for (const detail of await planProblems(handle.db)) {
          problems.push({ kind: "invariant", tool: "batch", detail, input: `HTTP batch ${batch}` });
        }
      }
      // The call log: no internal error was recorded either.
      const internal = await readRows<{ tool: string }>(
        handle.db,
        sql`select tool_name as tool from mcp_tool_call_log where error_code = 'INTERNAL_ERROR'`,
      );
      for (const row of internal)
        problems.push({ kind: "logged INTERNAL_ERROR", tool: row.tool, detail: "", input: "" });
    } finally {
      await handle.close();
    }
    console.log(
      `over HTTP: ${id} calls, statuses ${[...statuses].map(([s, n]) => `${s}×${n}`).join(" ")}: ${outcomes.ok} succeeded, ${outcomes.errors} error results, ${outcomes.invalidParams} invalid params, in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    keep(problems, "http");
    expect(summarise(problems)).toEqual([]);
    expect(id).toBe(HTTP_RUNS);
    expect(outcomes.ok).toBeGreaterThan(0);
  }, 300_000);
});
