/** Zod fields shared by the use cases' input schemas (and so by the MCP tools and the UI). */
import "server-only";
import { z } from "zod";
import { MAX_PLAN_STEPS } from "../../plan-engine/modify";
import { STEP_TYPES } from "../../plan-engine/states";

export const planIdField = z.uuid("must be a plan id (a UUID)").describe("The plan's id (planId).");
export const stepIdField = z.uuid("must be a step id (a UUID)").describe("The step's id (stepId).");
/**
 * The id of a record an admin form names (a key, a connected app, a webhook
 * endpoint or delivery, a user): checked before any query, so a tampered form
 * gets a validation message instead of a failed query.
 */
export const recordIdField = (what: string) => z.uuid(`must be ${what} id (a UUID)`);
export const sessionIdField = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe("Your client's session id, recorded in the audit trail.");

export const stepTypeField = z
  .enum(STEP_TYPES)
  .describe(
    "search: find and evaluate sources; extract: pull structured data; analyze: interpret and find patterns; critique: evaluate quality and gaps; synthesize: combine findings into conclusions; checkpoint: pause for user review; custom: anything else.",
  );

export const instructionsField = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(20_000)
  .describe("What the AI platform must do in this step, self-contained.");

const BINDINGS_HELP =
  'A string value of exactly "{{steps.N.result.<path>}}" (N: an earlier step\'s stepOrder) or "{{plan.researchQuestion}}" is replaced by that value, keeping its type; inside longer text it is interpolated.';

export const newStepField = z.object({
  stepType: stepTypeField,
  instructions: instructionsField,
  tool: z
    .string()
    .max(100)
    .optional()
    .describe(
      "Makes this a server-run step: Cairn runs this tool itself when the step is next, with `arguments` (search_sources, extract_data or store_research). Leave out for a step the agent does.",
    ),
  arguments: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(`A server-run step's input for its tool. ${BINDINGS_HELP}`),
  inputs: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      `An agent step's inputs, resolved when the step is handed out (returned as step.inputs). ${BINDINGS_HELP}`,
    ),
  outputSchema: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'A JSON Schema ({ "type": "object", ... }) the step\'s result must satisfy: checked on submit_step_result, and on the tool\'s result for a server-run step.',
    ),
});

/** A plan's most steps: the engine's limit, also for create_research_plan. */
export const MAX_STEPS = MAX_PLAN_STEPS;
