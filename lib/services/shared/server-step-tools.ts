/**
 * The Cairn tools a plan's step can name for Cairn to run itself (docs/protocol.md,
 * "Server-run steps"), and the checks of a step's definition when a plan is
 * created or steps are added: the tool exists, its arguments can match the
 * tool's input schema once bindings are resolved, bindings name earlier steps,
 * and an output schema is a usable JSON Schema.
 */
import "server-only";
import type { z } from "zod";
import { AppError } from "../../plan-engine/app-error";
import { isWholeBinding, validateBindings } from "../../plan-engine/bindings";
import { compileSchema, extractData, extractDataInput } from "../research/extract-data";
import { searchSources, searchSourcesInput } from "../research/search-sources";
import { storeResearch, storeResearchInput } from "../research/store-research";
import type { ServiceContext } from "./context";

type ServerTool = {
  input: z.ZodType;
  run(ctx: ServiceContext, args: never): Promise<unknown>;
  /** Whether the same call may succeed later (an upstream that was down, say). */
  retryable(code: string): boolean;
};

export const SERVER_STEP_TOOLS = {
  search_sources: { input: searchSourcesInput, run: searchSources, retryable: () => false },
  extract_data: {
    input: extractDataInput,
    run: extractData,
    retryable: (code: string) => code === "LLM_UPSTREAM_ERROR" || code === "EXTRACTION_FAILED",
  },
  store_research: { input: storeResearchInput, run: storeResearch, retryable: () => false },
} satisfies Record<string, ServerTool>;

export type ServerStepTool = keyof typeof SERVER_STEP_TOOLS;
export const SERVER_STEP_TOOL_NAMES = Object.keys(SERVER_STEP_TOOLS) as ServerStepTool[];

export function isServerStepTool(name: string): name is ServerStepTool {
  return Object.hasOwn(SERVER_STEP_TOOLS, name);
}

/** Whether the value at `path` of `root`, or a value on the way there, is one whole binding. */
function bindingOnPath(root: unknown, path: readonly PropertyKey[]): boolean {
  let node = root;
  for (const key of path) {
    if (isWholeBinding(node)) return true;
    if (node === null || typeof node !== "object") return false;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return isWholeBinding(node);
}

export type StepDefinition = {
  stepType?: string | undefined;
  tool?: string | undefined;
  arguments?: Record<string, unknown> | undefined;
  inputs?: Record<string, unknown> | undefined;
  outputSchema?: Record<string, unknown> | undefined;
};

/** Checks one step's definition; `stepOrder` is where the step will stand in the plan. */
export function validateStepDefinition(stepOrder: number, step: StepDefinition): void {
  const label = `steps[${stepOrder - 1}]`;
  if (step.arguments !== undefined && step.tool === undefined) {
    throw new AppError(
      "VALIDATION_ERROR",
      `${label}.arguments needs tool: the Cairn tool to run.`,
      {
        field: `${label}.tool`,
      },
    );
  }
  // A checkpoint is a pause for a person: nothing Cairn runs can pass it.
  if (step.stepType === "checkpoint" && step.tool !== undefined) {
    throw new AppError(
      "VALIDATION_ERROR",
      `${label}.tool: a checkpoint step is a pause for a person, so Cairn does not run it; leave tool out (the agent puts it up for review with request_user_review).`,
      { field: `${label}.tool` },
    );
  }
  if (step.tool !== undefined) {
    if (!isServerStepTool(step.tool)) {
      throw new AppError(
        "VALIDATION_ERROR",
        `${label}.tool: "${step.tool}" is not a tool Cairn runs itself; use one of ${SERVER_STEP_TOOL_NAMES.join(", ")}, or leave tool out for a step the agent does.`,
        { field: `${label}.tool` },
      );
    }
    const args = step.arguments ?? {};
    validateBindings(stepOrder, "arguments", args);
    // A whole binding stands for a value of any type, so only the issues that
    // no resolved binding could fix are errors now.
    const parsed = SERVER_STEP_TOOLS[step.tool].input.safeParse(args);
    const issue = parsed.success
      ? undefined
      : parsed.error.issues.find((i) => !bindingOnPath(args, i.path));
    if (issue) {
      const field = [`${label}.arguments`, ...issue.path.map(String)].join(".");
      throw new AppError(
        "VALIDATION_ERROR",
        `${field}: ${issue.message} (the input of ${step.tool}).`,
        { field },
      );
    }
  }
  if (step.inputs !== undefined) validateBindings(stepOrder, "inputs", step.inputs);
  if (step.outputSchema !== undefined) {
    try {
      compileSchema(step.outputSchema);
    } catch (error) {
      throw new AppError(
        "VALIDATION_ERROR",
        `${label}.outputSchema: ${error instanceof Error ? error.message.replace(/^schema: /, "") : String(error)}`,
        { field: `${label}.outputSchema` },
      );
    }
  }
}

/** The stored columns of a step's definition. */
export function stepDefinitionColumns(step: StepDefinition) {
  return {
    tool: step.tool ?? null,
    arguments: step.tool !== undefined ? (step.arguments ?? {}) : null,
    inputs: step.inputs ?? null,
    outputSchema: step.outputSchema ?? null,
  };
}
