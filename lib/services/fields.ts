/** Zod fields shared by the use cases' input schemas (and so by the MCP tools and the UI). */
import { z } from "zod";
import { STEP_TYPES } from "../plan-engine/states";

export const planIdField = z.uuid("must be a plan id (a UUID)").describe("The plan's id (planId).");
export const stepIdField = z.uuid("must be a step id (a UUID)").describe("The step's id (stepId).");
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

export const newStepField = z.object({
  stepType: stepTypeField,
  instructions: instructionsField,
});

export const MAX_STEPS = 200;
