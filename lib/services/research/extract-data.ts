/**
 * extract_data (docs/execution-flow.md, step type `extract`): the one use case that
 * calls a language model on the server. It turns given text, or stored
 * artifacts of the tenant, into a JSON object that matches a caller-given JSON
 * Schema: the model answers in JSON mode, the answer is validated with Ajv, and
 * one retry shows the model its validation errors. Nothing is stored; the
 * artifacts are read in a single query, and no transaction stays open while the
 * model works.
 */
import "server-only";
import Ajv, { type ValidateFunction } from "ajv";
import Ajv2019 from "ajv/dist/2019";
import Ajv2020 from "ajv/dist/2020";
import type AjvCore from "ajv/dist/core";
import addFormats from "ajv-formats";
import { and, inArray } from "drizzle-orm";
import { z } from "zod";
import { sameTenant } from "../../db/same-tenant";
import { researchArtifacts } from "../../db/schema";
import { type ChatEndpoint, type ChatMessage, chatCompletion } from "../../llm/chat-completions";
import { stripCodeFence } from "../../llm/code-fence";
import { AppError } from "../../plan-engine/app-error";
import type { LlmConfig, ServiceContext } from "../shared/context";
import { findPatternKeyword } from "../shared/schema-patterns";
import { parseInput } from "../shared/validation";

/** The most source text one call sends to the model (about 25,000 tokens). */
export const EXTRACT_TEXT_MAX = 100_000;
const SCHEMA_MAX_CHARS = 20_000;
const MAX_REPORTED_ERRORS = 20;

export const extractDataInput = z.object({
  schema: z
    .record(z.string(), z.unknown())
    .describe(
      'A JSON Schema, top level { "type": "object", ... }; describe each property. No "pattern" or "patternProperties".',
    ),
  text: z.string().trim().min(1, "must not be empty").max(EXTRACT_TEXT_MAX).optional(),
  artifactIds: z.array(z.uuid("must be an artifact id (a UUID)")).min(1).max(20).optional(),
  instructions: z.string().trim().max(5_000).optional(),
});

/** The answer: the object that matched the schema, the model and how many tries it took (1 or 2). */
export const extractedDataOutput = z.object({
  data: z.record(z.string(), z.unknown()),
  model: z.string(),
  attempts: z.number(),
});

export type ExtractedData = z.infer<typeof extractedDataOutput>;

function endpointOf(config: LlmConfig | undefined): ChatEndpoint {
  const missing = [
    config?.baseUrl ? null : "CAIRN_LLM_BASE_URL",
    config?.model ? null : "CAIRN_LLM_MODEL",
  ].filter((name): name is string => name !== null);
  if (!config?.baseUrl || !config.model) {
    throw new AppError(
      "LLM_NOT_CONFIGURED",
      `extract_data needs a language model, and this server has none: ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not set. The operator sets CAIRN_LLM_BASE_URL (an OpenAI-compatible API, e.g. https://api.openai.com/v1), CAIRN_LLM_MODEL (e.g. gpt-4o-mini) and, if the API needs one, CAIRN_LLM_API_KEY, then restarts Cairn. Until then, structure the data yourself and store it with store_research.`,
      { missing },
    );
  }
  return { baseUrl: config.baseUrl, apiKey: config.apiKey, model: config.model };
}

/** The Ajv dialect the schema names in `$schema`; draft-07 when it names none. */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  if (JSON.stringify(schema).length > SCHEMA_MAX_CHARS) {
    throw new AppError(
      "VALIDATION_ERROR",
      `schema: at most ${SCHEMA_MAX_CHARS} characters of JSON; split the extraction into smaller schemas.`,
    );
  }
  if (schema.type !== "object") {
    throw new AppError(
      "VALIDATION_ERROR",
      'schema: the top level must be { "type": "object", "properties": { ... } }, because the model answers with one JSON object.',
    );
  }
  const regex = findPatternKeyword(schema);
  if (regex) {
    throw new AppError(
      "VALIDATION_ERROR",
      `schema: regular-expression patterns are not supported ("${regex.keyword}" at ${regex.path}), because matching one against the model's answer can take unbounded time. Remove it, and describe the expected form in the property's "description" instead, or use "format", "enum", "minLength" / "maxLength".`,
      { path: regex.path, keyword: regex.keyword },
    );
  }
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  // A fresh instance per call: schemas differ per call and Ajv caches every
  // compiled one, which would grow without bound in a long-lived server.
  const options = { allErrors: true, strict: false } as const;
  const ajv: AjvCore = dialect.includes("2020-12")
    ? new Ajv2020(options)
    : dialect.includes("2019-09")
      ? new Ajv2019(options)
      : new Ajv(options);
  addFormats(ajv);
  try {
    return ajv.compile(schema);
  } catch (error) {
    throw new AppError(
      "VALIDATION_ERROR",
      `schema: not a usable JSON Schema: ${error instanceof Error ? error.message : String(error)}.`,
    );
  }
}

export function describeErrors(validate: ValidateFunction): string {
  const errors = (validate.errors ?? []).slice(0, MAX_REPORTED_ERRORS);
  return errors
    .map((error) => `${error.instancePath || "(root)"} ${error.message ?? "is invalid"}`)
    .join("; ");
}

function parseAnswer(answer: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(stripCodeFence(answer)) };
  } catch (error) {
    return {
      ok: false,
      error: `the answer is not valid JSON (${error instanceof Error ? error.message : "parse error"})`,
    };
  }
}

function check(
  validate: ValidateFunction,
  answer: string,
): { ok: true; data: Record<string, unknown> } | { ok: false; errors: string } {
  const parsed = parseAnswer(answer);
  if (!parsed.ok) return { ok: false, errors: parsed.error };
  const value = parsed.value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, errors: "the answer must be one JSON object" };
  }
  if (!validate(value)) return { ok: false, errors: describeErrors(validate) };
  return { ok: true, data: value as Record<string, unknown> };
}

async function sourceText(
  ctx: ServiceContext,
  input: z.output<typeof extractDataInput>,
): Promise<string> {
  const parts: string[] = [];
  if (input.text) parts.push(input.text);
  if (input.artifactIds) {
    const ids = [...new Set(input.artifactIds)];
    const rows = await ctx.db
      .select({
        id: researchArtifacts.id,
        title: researchArtifacts.title,
        contentText: researchArtifacts.contentText,
      })
      .from(researchArtifacts)
      .where(
        and(
          inArray(researchArtifacts.id, ids),
          sameTenant(researchArtifacts.tenantId, ctx.tenantId),
        ),
      );
    const found = new Map(rows.map((row) => [row.id, row]));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new AppError(
        "NOT_FOUND",
        `No artifact ${missing.join(", ")} exists for this account. Use artifact ids from store_research or search_sources.`,
        { missing },
      );
    }
    for (const id of ids) {
      const row = found.get(id);
      if (row) parts.push(`## Artifact ${row.id}: ${row.title}\n\n${row.contentText}`);
    }
  }
  const text = parts.join("\n\n---\n\n");
  if (text.length > EXTRACT_TEXT_MAX) {
    throw new AppError(
      "VALIDATION_ERROR",
      `The source text is ${text.length} characters; the limit is ${EXTRACT_TEXT_MAX}. Pass fewer artifactIds or a shorter text, and extract in several calls.`,
    );
  }
  return text;
}

export async function extractData(
  ctx: ServiceContext,
  raw: z.input<typeof extractDataInput>,
): Promise<ExtractedData> {
  const input = parseInput(extractDataInput, raw);
  if (!input.text && !input.artifactIds) {
    throw new AppError(
      "VALIDATION_ERROR",
      "text or artifactIds: give the source text, the ids of stored artifacts, or both.",
    );
  }
  const validate = compileSchema(input.schema);
  const endpoint = endpointOf(ctx.llm);
  const source = await sourceText(ctx, input);

  const messages: ChatMessage[] = [
    {
      role: "system",
      content: [
        "You extract structured data from a source text.",
        "Answer with exactly one JSON object and nothing else.",
        "The object must validate against this JSON Schema:",
        JSON.stringify(input.schema),
        "Use only what the source states. Never invent values: leave out an optional property, or use null where the schema allows it, when the source does not say. Numbers are JSON numbers, without units unless the schema asks for text.",
      ].join("\n"),
    },
    {
      role: "user",
      content: `${input.instructions ? `${input.instructions}\n\n` : ""}Source:\n<<<\n${source}\n>>>`,
    },
  ];

  const first = await chatCompletion(endpoint, messages);
  const firstCheck = check(validate, first);
  if (firstCheck.ok) return { data: firstCheck.data, model: endpoint.model, attempts: 1 };

  const second = await chatCompletion(endpoint, [
    ...messages,
    { role: "assistant", content: first },
    {
      role: "user",
      content: `That answer does not match the JSON Schema: ${firstCheck.errors}. Reply with the corrected JSON object only.`,
    },
  ]);
  const secondCheck = check(validate, second);
  if (secondCheck.ok) return { data: secondCheck.data, model: endpoint.model, attempts: 2 };

  throw new AppError(
    "EXTRACTION_FAILED",
    `The model's answer did not match your schema, also after a retry: ${secondCheck.errors}. Make hard-to-find properties optional, describe each property, or extract the data yourself.`,
    { errors: secondCheck.errors },
  );
}
