/** Zod fields shared by the use cases' input schemas (and so by the MCP tools and the UI). */
import "server-only";
import { z } from "zod";
import { MAX_PLAN_STEPS } from "../../plan-engine/modify";
import { STEP_TYPES } from "../../plan-engine/states";

// No description: the name and `format: uuid` say it all in tools/list.
export const planIdField = z.uuid("must be a plan id (a UUID)");
export const stepIdField = z.uuid("must be a step id (a UUID)");
/**
 * The id of a record an admin form names (a key, a connected app, a webhook
 * endpoint or delivery, a user): checked before any query, so a tampered form
 * gets a validation message instead of a failed query.
 */
/** Who asked for a pending review and when, its deadline, and whom it is assigned to: as every read of one shows it. */
export const reviewRequestFields = {
  requestedBy: z.string(),
  requestedAt: z.string(),
  dueAt: z.string().nullable(),
  onTimeout: z.string().nullable(),
  escalatedAt: z.string().nullable(),
  assignedUserId: z.string().nullable(),
};

export const recordIdField = (what: string) => z.uuid(`must be ${what} id (a UUID)`);
export const sessionIdField = z.string().trim().min(1).max(200);

export const stepTypeField = z
  .enum(STEP_TYPES)
  .describe("checkpoint: pause for a person's review; custom: anything else.");

/**
 * The size of a value as the JSON text an agent sends, in UTF-8 bytes; undefined
 * for a value JSON cannot write (nested too deep for JSON.stringify's stack:
 * parseInput's depth check names that field afterwards).
 */
export function jsonBytes(value: unknown): number | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : Buffer.byteLength(text, "utf8");
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

const KIB = 1024;
/** A byte count as a person reads it: "131,072 bytes (128 KB)". */
export const formatBytes = (bytes: number) =>
  `${bytes.toLocaleString("en-US")} bytes${bytes >= KIB ? ` (${Math.round(bytes / KIB)} KB)` : ""}`;

/**
 * A JSON value an agent supplies that people see or the audit trail copies
 * (a result, a proposal, a step's arguments): at most `maxBytes` of JSON text
 * (docs/execution-loop.md, "Size limits"). Above it, a VALIDATION_ERROR at the
 * field's path gives its size, the limit and what to do instead; the limit is
 * also added to the field's description, which the MCP tool lists.
 */
export function jsonAtMost<T extends z.ZodType>(schema: T, maxBytes: number, instead: string): T {
  const limit = `Max ${Math.round(maxBytes / KIB)} KB.`;
  return schema
    .superRefine((value, ctx) => {
      const bytes = value === undefined ? undefined : jsonBytes(value);
      if (bytes !== undefined && bytes > maxBytes) {
        ctx.addIssue({
          code: "custom",
          message: `is ${formatBytes(bytes)} as JSON text, over the limit of ${formatBytes(maxBytes)}; ${instead}`,
        });
      }
    })
    .describe(schema.description ? `${schema.description} ${limit}` : limit);
}

/** An optional step result given with a review (a proposal, a result a person entered), bounded like a result. */
export const optionalResultField = (description: string) =>
  jsonAtMost(
    z.record(z.string(), z.unknown()).optional().describe(description),
    MAX_RESULT_BYTES,
    RESULT_TOO_BIG,
  );

/**
 * A stored JSON object as a form shows it to be edited: indented, unless the
 * indentation takes it past `maxBytes` (each level of nesting indents every
 * line inside it, so a deeply nested value grows many times over); then as
 * compact as it was stored, which the form's `jsonObjectText(maxBytes)` takes
 * back unchanged.
 */
export function editableJsonText(value: Record<string, unknown> | null, maxBytes: number): string {
  const indented = JSON.stringify(value ?? {}, null, 2);
  return Buffer.byteLength(indented, "utf8") <= maxBytes ? indented : JSON.stringify(value ?? {});
}

/**
 * A JSON object typed into a form as text (a result a person enters): at most
 * `maxBytes` of text, parsed, and refused with where the JSON breaks or what it
 * is instead of an object. The use case then checks the object itself.
 */
export function jsonObjectText(maxBytes: number) {
  return z
    .string()
    .max(maxBytes, `is longer than ${maxBytes.toLocaleString("en-US")} characters of JSON text`)
    .transform((text, ctx): Record<string, unknown> => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        ctx.addIssue({
          code: "custom",
          message: `is not valid JSON (${error instanceof Error ? error.message : "unreadable"}): enter an object such as {"verdict": "holds"}`,
        });
        return z.NEVER;
      }
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        ctx.addIssue({
          code: "custom",
          message:
            'must be a JSON object such as {"verdict": "holds"}, not a single value or a list',
        });
        return z.NEVER;
      }
      return value as Record<string, unknown>;
    });
}

/** The most JSON text of a step's result, and so of a proposed result (an approve completes the step with it). */
export const MAX_RESULT_BYTES = 128 * KIB;
export const RESULT_TOO_BIG =
  "keep the result to what conditions and people need, and store long material with store_research (its artifactId in the result).";
/** The most JSON text of each list of a step's execution report. */
export const MAX_REPORT_LIST_BYTES = 64 * KIB;
/** The most JSON text of a step's arguments, inputs and outputSchema. */
export const MAX_STEP_IO_BYTES = 64 * KIB;
/** The most JSON text of a branching condition's actionParams. */
export const MAX_ACTION_PARAMS_BYTES = 4 * KIB;
const STEP_IO_TOO_BIG =
  "pass a large input through a binding to an earlier step's result or a stored artifact instead.";

export const instructionsField = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(20_000)
  .describe("What to do in this step, self-contained.");

export const newStepField = z.object({
  stepType: stepTypeField,
  instructions: instructionsField,
  tool: z
    .string()
    .max(100)
    .optional()
    .describe(
      "search_sources, extract_data or store_research: Cairn runs the step with arguments. Left out, yours.",
    ),
  arguments: jsonAtMost(
    z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'The tool\'s input; a string "{{steps.N.result.<path>}}" (N earlier) or "{{plan.researchQuestion}}" becomes that value.',
      ),
    MAX_STEP_IO_BYTES,
    STEP_IO_TOO_BIG,
  ),
  inputs: jsonAtMost(
    z
      .record(z.string(), z.unknown())
      .optional()
      .describe("Your step's inputs (step.inputs), bound as arguments are."),
    MAX_STEP_IO_BYTES,
    STEP_IO_TOO_BIG,
  ),
  outputSchema: jsonAtMost(
    z
      .record(z.string(), z.unknown())
      .optional()
      .describe("A JSON Schema (type object) the step's result must meet."),
    MAX_STEP_IO_BYTES,
    "describe the result with a smaller schema.",
  ),
});

/** A plan's most steps: the engine's limit, also for create_research_plan. */
export const MAX_STEPS = MAX_PLAN_STEPS;
